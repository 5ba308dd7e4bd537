"""Assembles a wheel (the binary distribution format, PEP 427 / PEP 491) with the standard
library's zipfile: the package's Python files, its compiled module, and the dist-info folder
with METADATA, WHEEL, entry_points.txt and RECORD (each file's sha256 and size)."""

import base64
import hashlib
import os
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path

from . import elf, metadata

# Entries carry this fixed time (or SOURCE_DATE_EPOCH's): the same inputs give the same wheel.
_EPOCH = (1980, 1, 1, 0, 0, 0)
_PACKAGE_FILES = ("*.py", "*.pyi", "py.typed")


def _date_time():
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if not epoch:
        return _EPOCH
    import time
    t = time.gmtime(max(int(epoch), 315532800))
    return t[:6]


def _record_line(arcname, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")
    return f"{arcname},sha256={digest},{len(data)}"


def package_files(package_dir):
    """The package's files, as (path, name in the wheel), sorted; caches and compiled modules left out."""
    package_dir = Path(package_dir)
    files = set()
    for pattern in _PACKAGE_FILES:
        files.update(p for p in package_dir.rglob(pattern) if "__pycache__" not in p.parts)
    return [(p, "reservoir/" + p.relative_to(package_dir).as_posix()) for p in sorted(files)]


def stripped_copy(module, folder):
    """A copy of the module without debug information (strip --strip-unneeded), when strip exists."""
    copy = Path(folder) / module.name
    shutil.copyfile(module, copy)
    tool = shutil.which("strip")
    if tool:
        subprocess.run([tool, "--strip-unneeded", str(copy)], check=True)
    return copy


def python_tag(module_tag):
    """'cp312' -> 'cp312-cp312' (the interpreter and ABI tags of a CPython extension)."""
    return f"{module_tag}-{module_tag}"


def build(source, module, module_tag, out_dir, max_glibc=elf.MAX_GLIBC):
    """Writes the wheel for one interpreter into out_dir; returns (its path, the ELF facts)."""
    source, module, out_dir = Path(source), Path(module), Path(out_dir)
    package_dir = source / "python" / "reservoir"
    with tempfile.TemporaryDirectory() as tmp:
        so = stripped_copy(module, tmp)
        facts = elf.check(so, max_glibc)
        tag = f"{python_tag(module_tag)}-{elf.platform_tag(facts['glibc'])}"
        name = f"{metadata.NAME}-{metadata.version(source)}-{tag}.whl"
        dist_info = metadata.dist_info_name(source)
        entries = [(arc, p.read_bytes()) for p, arc in package_files(package_dir)]
        entries.append((f"reservoir/{module.name}", so.read_bytes()))
        entries += [
            (f"{dist_info}/METADATA", metadata.metadata_text(source).encode("utf-8")),
            (f"{dist_info}/WHEEL", metadata.wheel_text(tag).encode("utf-8")),
            (f"{dist_info}/entry_points.txt", metadata.entry_points_text(package_dir).encode("utf-8")),
            (f"{dist_info}/top_level.txt", b"reservoir\n"),
        ]
        record = [_record_line(arc, data) for arc, data in entries] + [f"{dist_info}/RECORD,,"]
        entries.append((f"{dist_info}/RECORD", ("\n".join(record) + "\n").encode("utf-8")))
        out_dir.mkdir(parents=True, exist_ok=True)
        partial = out_dir / (name + ".part")
        with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED) as z:
            for arc, data in entries:
                info = zipfile.ZipInfo(arc, date_time=_date_time())
                info.compress_type = zipfile.ZIP_DEFLATED
                info.external_attr = (0o755 if arc.endswith(".so") else 0o644) << 16
                z.writestr(info, data)
        final = out_dir / name
        os.replace(partial, final)
    return final, facts
