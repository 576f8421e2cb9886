"""ccls — a cost-aware language server: CU, energy, CO2 and $ per function, in the editor."""
__version__ = "0.1.0"
