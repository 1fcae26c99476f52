"""Slips in the file names and paths of the prompt, for `identifier_corruption`:

  - a changed extension that is no file type (`report.docx` -> `report.docodex`, `deck.pptx` -> `deck.pptcodex`,
    `a.tscn` -> `a.tcsn`): the stem is the prompt's, the prompt's extension is a known file type, the written one is
    not, and it keeps the original's first two letters or is at most two edits from it. A changed extension that is
    a file type (`report.docx` -> `report.pdf`, `main.c` -> `main.h`) is how new files are named: never flagged.
  - a space inside a name of the prompt at a separator (`scenes/character_creation. tscn`, `src/ utils.py`).
Known file types: the standard library's MIME table (its built-in defaults, the same on every machine) and the
extensions of code, data and office files below.
"""

from __future__ import annotations

import mimetypes
import re

_EXTRA = """
docx xlsx pptx odt ods odp rtf epub md markdown rst adoc org tex bib ipynb py pyi pyx pxd ts tsx js jsx mjs cjs vue
svelte rs go java kt kts scala swift m mm c cc cpp cxx h hh hpp hxx cs fs vb rb php pl pm lua r jl dart ex exs erl hrl
hs ml mli clj cljs elm nim zig v sv vhd sol cu cuh proto thrift graphql gql sql sh bash zsh fish ps1 bat cmd toml yaml
yml ini cfg conf env json jsonl ndjson json5 xml xsd xsl csv tsv parquet arrow feather avro orc npy npz pkl pickle h5
hdf5 safetensors gguf onnx pt pth ckpt bin lock log txt diff patch tscn tres gd godot unity prefab uasset blend fbx obj
gltf glb stl svg png jpg jpeg gif webp bmp ico tif tiff heic mp3 wav flac ogg m4a mp4 mkv mov avi webm zip tar gz tgz
bz2 xz zst 7z rar whl egg jar war dll so dylib exe msi deb rpm apk dmg iso img wasm map css scss sass less html htm
mdx jsonc text xhtml gradle properties tf tfvars hcl dockerfile mk cmake make am in j2 jinja jinja2 tpl mustache
hbs ejs pug liquid
"""
KNOWN_EXTENSIONS = frozenset(
    {e.lstrip(".").lower() for strict in (True, False) for e in mimetypes.MimeTypes().types_map[strict]}
    | set(_EXTRA.split())
)
_EXT = re.compile(rb"^(.+)\.([A-Za-z][A-Za-z0-9]{0,5})$")
_WRITTEN_EXT = re.compile(rb"^(.+)\.([A-Za-z]{2,12})$")


def split_ext(name: bytes, written: bool = False) -> tuple[bytes, bytes] | None:
    """(stem, extension) of a file name or path, or None."""
    m = (_WRITTEN_EXT if written else _EXT).match(name)
    return (m.group(1), m.group(2)) if m else None


def extension_slip(original: bytes, written: bytes) -> bool:
    """`written` is the file name `original` with its extension changed into no file type (see the docstring)."""
    a, b = original.decode("ascii", "replace").lower(), written.decode("ascii", "replace").lower()
    if a == b or a not in KNOWN_EXTENSIONS or b in KNOWN_EXTENSIONS:
        return False
    return (len(a) >= 2 and b.startswith(a[:2]) and len(b) > len(a)) or (len(a) >= 3 and _edits(a, b) <= 2)


def _edits(a: str, b: str) -> int:
    """Damerau-Levenshtein distance (optimal string alignment) of two short strings."""
    d = [[i + j if i * j == 0 else 0 for j in range(len(b) + 1)] for i in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[-1][-1]


# A space after a separator or before one, inside a token pair: `creation. tscn`, `src/ utils.py`, `foo _bar`.
SPACED = re.compile(r"([^\s\"'`]*\w[./_-]) +(\w[^\s\"'`]*)|([^\s\"'`]*\w) +([./_]\w[^\s\"'`]*)")
