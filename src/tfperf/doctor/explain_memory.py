"""Fragmentation told from size: an out-of-memory whose own dump shows enough free memory.

TensorFlow's BFC allocator prints, with a failed allocation, the request (``ran out of memory
trying to allocate 1.53GiB (rounded to 1638400000)``) and its ``Stats`` (``Limit:`` the memory
it may use, ``InUse:`` what live tensors hold) and, from TF 1.14, ``total_region_allocated_bytes_
... memory_limit_ ...``. When the memory the allocator holds minus what is in use is at least the
request, the allocation failed because no free piece is large enough: fragmentation, whose fix
(``TF_GPU_ALLOCATOR=cuda_malloc_async``) differs from "use less memory". When the allocator had
not grown to its limit and could not get more, another process holds the GPU's memory.

Host memory told from its consequence: TensorFlow's "Allocation of N exceeds 10% of system
memory" is only a warning (most runs go on), but followed by the process being killed (a
shell's ``Killed``, exit status 137) it is the out-of-memory killer ending a run whose host RAM
ran out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40,
          "Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40, "T": 1 << 40, "TB": 1 << 40,
          "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30}


def _bytes(text: str) -> int | None:
    """'1638400000' -> 1638400000; '1.53GiB' / '2.16 GiB' / '7.81G' -> bytes; else None."""
    text = text.strip().replace(" ", "")
    if text.isdigit():
        return int(text)
    for unit in sorted(_UNITS, key=len, reverse=True):
        if text.endswith(unit):
            try:
                return int(float(text[: -len(unit)]) * _UNITS[unit])
            except ValueError:
                return None
    return None


def _gib(n: int) -> str:
    return f"{n / (1 << 30):.2f} GiB" if n >= 1 << 30 else f"{n / (1 << 20):.1f} MiB"


@dataclass(frozen=True)
class MemoryVerdict:
    fragmented: bool
    detail: str
    free: int = 0  # bytes the allocator held free when the request failed


def judge_oom(details: dict[str, list[str]]) -> MemoryVerdict | None:
    """Fragmentation or not, from an OOM cause's details; None when the dump lacks the numbers."""
    def first(*names: str) -> int | None:
        for name in names:
            for value in details.get(name, []):
                if (n := _bytes(value)) is not None:
                    return n
        return None

    request = first("rounded", "rounded2", "size2")
    limit = first("limit_bytes", "memory_limit")
    in_use = first("inuse_bytes", "inuse_total")
    if request is None or limit is None or in_use is None or request <= 0:
        return None
    held = first("region_bytes") or limit  # what the allocator got from the device so far
    free = held - in_use
    if free >= request:
        return MemoryVerdict(True, f"{_gib(free)} free of the {_gib(held)} the allocator holds "
                                   f"({_gib(in_use)} in use), yet {_gib(request)} could not be "
                                   "allocated in one piece", free)
    if held < limit:
        return MemoryVerdict(False, f"the allocator holds {_gib(held)} of its {_gib(limit)} limit "
                                    "and could not grow: other processes hold the GPU's memory")
    return MemoryVerdict(False, f"{_gib(in_use)} in use of {_gib(limit)}: only {_gib(free)} "
                                f"free for {_gib(request)}")


# the shell's report of a SIGKILL (also at the end of a progress line; '已杀死' is zh_CN; dash's
# './train.sh: 60: 11880 killed  python3 ...' and bash's 'line 52:  7125 Killed  python ...' name
# the job, as job control does: bash's '[1]+  Killed  python ...', zsh's '[1]  12345 killed
# python ...'), or a runner's exit status 137 / -9
_KILLED = re.compile(r"(?:^|\s)(?:Killed|已杀死)\s*$|:\s+\d+\s+[Kk]illed\s|\bzsh: killed\s|"
                     r"^\[\d+\][+-]?\s+(?:\d+\s+)?[Kk]illed\s|"
                     r"\bexit(?:ed with)? (?:code|status) (?:137|-9)\b")


def killed_after(lines: list[str], after: int) -> int | None:
    """0-based index of the first line after line ``after`` (0-based) saying that the process
    was killed by the operating system; None when there is none."""
    read: dict[str, bool] = {}  # a repeated line is read once
    for i in range(after + 1, len(lines)):
        line = lines[i]
        said = read.get(line)
        if said is None:
            said = read[line] = bool(("ill" in line or "137" in line or "-9" in line
                                      or "杀死" in line) and _KILLED.search(line))
        if said:
            return i
    return None


def allocation_detail(details: dict[str, list[str]]) -> str:
    """'a host allocation of 791.0 MiB' for the largest 'Allocation of N exceeds' seen."""
    sizes = [n for v in details.get("bytes", []) if (n := _bytes(v)) is not None]
    return f"a host allocation of {_gib(max(sizes))}" if sizes else "a large host allocation"


# the machine's RAM as a log shows it: /proc/meminfo, free's table, a stated size ('8 GB RAM',
# 'RAM: 12 GB', '32gb of RAM'); looked for only on lines holding one of the literals ("memory"
# alone is on too many of TensorFlow's own lines)
_RAM_WORDS = ("MemTotal", "Mem:", "RAM")
_RAM = re.compile(r"MemTotal:\s+(?P<kb>\d+) kB|^\s*Mem:\s+(?P<free>[\d.]+\s?[KMGT]i?B?)\s|"
                  r"(?P<size>\d+(?:\.\d+)?\s?[GgTt]i?[Bb]) (?:of )?RAM\b|"
                  r"\bRAM:? (?P<size2>\d+(?:\.\d+)?\s?[GgTt]i?[Bb])\b")
_SIZE = re.compile(r"([\d.]+)\s?([KMGTkmgt])")
_POWER = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_LARGE_SHARE = 0.5  # TensorFlow's own threshold for the total allocated (cpu_allocator_impl.cc)


def ram_shown(text: str) -> int | None:
    """Bytes of RAM the log shows (the largest figure), or None."""
    sizes = []
    for word in _RAM_WORDS:
        at = text.find(word)
        while at >= 0:
            start, end = text.rfind("\n", 0, at) + 1, text.find("\n", at)
            line = text[start:end if end >= 0 else len(text)]
            for m in _RAM.finditer(line):
                if m["kb"]:
                    sizes.append(int(m["kb"]) * 1024)
                elif size := _SIZE.match(m["free"] or m["size"] or m["size2"] or ""):
                    sizes.append(int(float(size[1]) * _POWER[size[2].upper()]))
            at = text.find(word, end) if end >= 0 else -1
    return max(sizes) if sizes else None


def share_detail(details: dict[str, list[str]], ram: int | None) -> str:
    """'4.99 GiB of the 8.00 GiB of RAM the log shows (62 %)' when the allocations are a large
    share of the RAM ('' when not, or when the log shows neither): then it is a problem."""
    if details.get("total_bytes"):  # TensorFlow's own: the total exceeds half the free RAM
        total = max(_bytes(v) or 0 for v in details["total_bytes"])
        return (f"the total allocated, {_gib(total)}, exceeds {details['total_pct'][0]} % of the "
                "free system memory (TensorFlow's own count)")
    sizes = [n for v in details.get("bytes", []) if (n := _bytes(v)) is not None]
    if not sizes or not ram:
        return ""
    largest = max(sizes)
    if largest < _LARGE_SHARE * ram:
        return ""
    return (f"{_gib(largest)} in one allocation, of the {_gib(ram)} of RAM the log shows "
            f"({100 * largest / ram:.0f} %)")


# the shuffle buffer's progress ("Filling up shuffle buffer (this may take a while): 1359 of 2048")
_SHUFFLE = re.compile(r"Filling up shuffle buffer[^:\n]*: (?P<n>\d+) of (?P<size>\d+)|"
                      r"(?P<filled>Shuffle buffer filled)")
_NEAR = 5  # non-blank lines between the buffer's last line and the kill for it to be the cause


def shuffle_killed(lines: list[str], shuffle_lines: list[int]) -> tuple[int, str] | None:
    """(0-based kill line, detail) when the process was killed while a shuffle buffer filled or
    just after it filled: the buffer's elements held the host's RAM."""
    if not shuffle_lines:
        return None
    last = shuffle_lines[-1] - 1
    at = killed_after(lines, last)
    if at is None or sum(1 for ln in lines[last + 1:at] if ln.strip()) > _NEAR:
        return None
    size, reached = "", ""
    for number in shuffle_lines:
        if (m := _SHUFFLE.search(lines[number - 1])) and m["size"]:
            size, reached = m["size"], m["n"]
    last_match = _SHUFFLE.search(lines[last])
    filled = bool(last_match and last_match["filled"])
    where = ("just after the shuffle buffer filled" if filled else
             f"while the shuffle buffer filled ({reached} of {size})" if size else
             "while the shuffle buffer filled")
    of = f" of {size} elements" if size else ""
    return at, (f"killed (line {at + 1}) {where}: a shuffle buffer{of} holds that many decoded "
                "elements in host RAM (images: width x height x channels each); lower buffer_size "
                "(e.g. 2048 -> 256, or shuffle file names or records before decoding) or add RAM")
