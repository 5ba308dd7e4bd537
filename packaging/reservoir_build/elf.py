"""What a compiled file in a wheel needs from the system, read with binutils' readelf: its NEEDED
libraries and the newest glibc symbol version it asks for. The wheel's manylinux tag is that
measured floor (PEP 600: manylinux_2_NN runs where glibc is 2.NN or newer)."""

import re
import shutil
import subprocess

# What manylinux lets a wheel take from the system (the rest must be inside the wheel).
ALLOWED_NEEDED = frozenset([
    "libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2", "librt.so.1", "libgcc_s.so.1",
    "ld-linux-x86-64.so.2",
])
# The newest glibc a wheel may need: RHEL 9's (Ubuntu 22.04 has 2.35).
MAX_GLIBC = (2, 34)


class ElfProblem(Exception):
    """A compiled file needs more than a self-contained wheel may."""


def _readelf(args, path):
    tool = shutil.which("readelf")
    if not tool:
        raise ElfProblem("readelf (binutils) is needed to check the wheel's compiled files")
    return subprocess.run([tool, *args, str(path)], capture_output=True, text=True, check=True).stdout


def needed(path):
    """The NEEDED entries of the dynamic section."""
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", _readelf(["-d", "-W"], path))


def version_needs(path):
    """{library: [version names]} from the version-needs section (readelf -V)."""
    out, current = {}, None
    for line in _readelf(["-V", "-W"], path).splitlines():
        m = re.search(r"File: (\S+)", line)
        if m:
            current = m.group(1)
            out.setdefault(current, [])
            continue
        m = re.search(r"Name: (\S+)", line)
        if m and current:
            out[current].append(m.group(1))
    return out


def _glibc(name):
    m = re.fullmatch(r"GLIBC_(\d+)\.(\d+)(?:\.\d+)?", name)
    return (int(m.group(1)), int(m.group(2))) if m else None


def check(path, max_glibc=MAX_GLIBC):
    """Checks one file; returns its facts {"needed", "glibc": (2, N), "symbols"} or raises ElfProblem."""
    libs = needed(path)
    extra = [lib for lib in libs if lib not in ALLOWED_NEEDED]
    if extra:
        raise ElfProblem(f"{path} needs {', '.join(extra)}, which a self-contained wheel may not take from the "
                         f"system (allowed: {', '.join(sorted(ALLOWED_NEEDED))})")
    versions = version_needs(path)
    floor, newest_by = (2, 0), []
    for lib, names in versions.items():
        for name in names:
            if name.startswith(("GLIBCXX_", "CXXABI_")):
                raise ElfProblem(f"{path} asks {lib} for {name}: libstdc++ must be linked statically")
            v = _glibc(name)
            if v and v > floor:
                floor, newest_by = v, [name]
    if floor > max_glibc:
        raise ElfProblem(f"{path} needs glibc {floor[0]}.{floor[1]} ({', '.join(newest_by)}), newer than the "
                         f"{max_glibc[0]}.{max_glibc[1]} a wheel may need")
    return {"needed": libs, "glibc": floor, "versions": versions}


def platform_tag(floor, machine="x86_64"):
    return f"manylinux_{floor[0]}_{floor[1]}_{machine}"
