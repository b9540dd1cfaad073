"""Type stubs of the compiled module airtrace._core (crates/airtrace-py)."""

__version__: str

Column = tuple[str, str, bytes, bytes | None, list[str] | None]

def analyze(path: str, packets: bool = False, progress: bool = False) -> tuple[str, list[Column] | None]: ...
def flag_names() -> list[str]: ...
