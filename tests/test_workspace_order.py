"""The workspace pass's order (issue 15): files near the open ones — in an open file's
directory, or a header it includes — before the rest, looked at again each time a worker frees,
so a file opened during the pass moves its neighbours up."""
from __future__ import annotations

from ccls.lsp.workspace import WorkspaceIndex, is_near
from ccls.service.background import NEAR_FILE, OTHER_FILE


def test_near_means_the_same_directory_or_an_included_header():
    directories, headers = {"/ws/src"}, {"/ws/include/api.h"}
    assert is_near("/ws/src/other.c", directories, headers)
    assert is_near("/ws/include/api.h", directories, headers)
    assert not is_near("/ws/include/private.h", directories, headers)
    assert not is_near("/ws/src/sub/deeper.c", directories, headers)


def _index(near: list[tuple[set[str], set[str]]]) -> WorkspaceIndex:
    """An index whose open files' (directories, headers) are `near[0]`, as the test sets them."""
    return WorkspaceIndex(service=None, pool=None, background=None, folders=[], settings=lambda: None,
                          open_paths=set, near_open=lambda: near[0], events=None)


def test_the_pass_takes_files_near_the_open_ones_first_and_follows_newly_opened_files():
    near = [({"/ws/a"}, {"/ws/inc/a.h"})]
    index = _index(near)
    queue = ["/ws/b/1.c", "/ws/a/2.c", "/ws/c/3.c", "/ws/inc/a.h", "/ws/inc/z.h", "/ws/a/4.c", "/ws/c/5.c"]
    index._queue, index._queued = list(queue), set(queue)
    taken = [index._next() for _ in range(4)]
    assert taken == [("/ws/a/2.c", NEAR_FILE), ("/ws/inc/a.h", NEAR_FILE), ("/ws/a/4.c", NEAR_FILE),
                     ("/ws/b/1.c", OTHER_FILE)]
    near[0] = ({"/ws/a", "/ws/c"}, {"/ws/inc/a.h"})  # a file in c/ is opened
    assert [index._next() for _ in range(3)] == [("/ws/c/3.c", NEAR_FILE), ("/ws/c/5.c", NEAR_FILE),
                                                  ("/ws/inc/z.h", OTHER_FILE)]
    assert index._queue == [] and index._queued == set()
