"""A repository URL as an analysis PATH (seed §3: "directory paths or repository URLs"): cloned
shallowly with git into a temporary directory, analysed, removed. The edge: runs `git`, never
anything from the repository (no checkout hooks exist for a clone; LFS smudge filters are off)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator, Sequence

URL_SCHEMES = ("https://", "http://", "ssh://", "git://", "file://", "git+ssh://", "ssh+git://")
_SCP_LIKE = re.compile(r"^[A-Za-z0-9._-]+@[A-Za-z0-9._-]+:(?!//)\S")  # git@host:owner/repo.git
CLONE_TIMEOUT_S = 600.0


class CloneError(Exception):
    """git is missing, or the clone failed (git's own words in the message)."""


@dataclass(frozen=True)
class Checkout:
    url: str  # as the user gave it
    path: str  # the clone's folder (temporary)
    revision: str  # the commit cloned


def is_repository_url(text: str) -> bool:
    """A URL git clones: a scheme it speaks, or scp-like `user@host:path`. An existing local path
    of the same spelling is a path."""
    if os.path.exists(text):
        return False
    return text.lower().startswith(URL_SCHEMES) or bool(_SCP_LIKE.match(text))


# Variables that point git at another repository (a pre-commit hook sets GIT_INDEX_FILE): a clone
# must not read or write the caller's.
_REPOSITORY_VARIABLES = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
                         "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_NAMESPACE", "GIT_PREFIX")


def _git_env() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in _REPOSITORY_VARIABLES}
    env["GIT_TERMINAL_PROMPT"] = "0"  # a private repository fails with a message instead of waiting for a password
    env["GIT_LFS_SKIP_SMUDGE"] = "1"
    env.setdefault("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")
    return env


def _last_words(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    fatal = [line for line in lines if line.lower().startswith(("fatal:", "error:"))]
    return (fatal or lines or ["no message"])[-1]


def shallow_clone(url: str, destination: str, timeout_s: float = CLONE_TIMEOUT_S) -> Checkout:
    """`git clone --depth 1 URL destination`; raises CloneError with git's message."""
    git = shutil.which("git")
    if git is None:
        raise CloneError(f"{url} is a repository URL, but git is not installed (install git, or clone it yourself "
                         f"and give the folder)")
    try:
        done = subprocess.run([git, "clone", "--depth", "1", "--quiet", "--", url, destination], env=_git_env(),
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise CloneError(f"cannot clone {url}: no answer within {timeout_s:g} s (is the network reachable?)") from None
    except OSError as problem:
        raise CloneError(f"cannot run git to clone {url}: {problem.strerror}") from None
    if done.returncode != 0:
        raise CloneError(f"cannot clone {url}: {_last_words(done.stderr)}")
    head = subprocess.run([git, "-C", destination, "rev-parse", "HEAD"], env=_git_env(), stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=60)
    return Checkout(url, destination, head.stdout.strip() if head.returncode == 0 else "")


@contextmanager
def cloned(paths: Sequence[str], timeout_s: float = CLONE_TIMEOUT_S) -> Iterator[tuple[list[str], list[Checkout]]]:
    """`paths` with every repository URL replaced by a shallow clone of it, and those clones;
    the clones are removed on leaving, whatever happens."""
    if not any(is_repository_url(p) for p in paths):
        yield list(paths), []
        return
    scratch = tempfile.mkdtemp(prefix="ccls-clone-")
    try:
        local, checkouts = [], []
        for k, path in enumerate(paths):
            if is_repository_url(path):
                checkout = shallow_clone(path, os.path.join(scratch, f"repo{k}"), timeout_s)
                checkouts.append(checkout)
                local.append(checkout.path)
            else:
                local.append(path)
        yield local, checkouts
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
