"""`tfperf explain` reads a log in the encoding it was written in: PowerShell's `>` and
`Out-File` write UTF-16, which read as UTF-8 turned a cuDNN failure into "nothing wrong"."""

from __future__ import annotations

import codecs
import io

import pytest

from tfperf.cli import main

LOG = ("2024-03-01 10:00:00.1 W tensorflow/stream_executor/platform/default/dso_loader.cc:64] "
       "Could not load dynamic library 'libcudnn.so.8'; dlerror: libcudnn.so.8: cannot open "
       "shared object file: No such file or directory\r\n")


class _Stdin(io.TextIOWrapper):
    def __init__(self, data: bytes) -> None:
        super().__init__(io.BytesIO(data))

    def isatty(self) -> bool:
        return False


@pytest.mark.parametrize("data", [
    codecs.BOM_UTF16_LE + LOG.encode("utf-16-le"),  # PowerShell 5: `python train.py > x.log`
    codecs.BOM_UTF16_BE + LOG.encode("utf-16-be"),
    LOG.encode("utf-16-le"),  # no mark: every other byte NUL
    codecs.BOM_UTF8 + LOG.encode(),  # PowerShell 7 with -Encoding utf8BOM
    LOG.encode(),  # valid twin: plain UTF-8, read as before
], ids=["utf16le-bom", "utf16be-bom", "utf16le", "utf8-bom", "utf8"])
def test_a_log_in_any_windows_encoding_is_explained(tmp_path, capsys, monkeypatch, data):
    path = tmp_path / "train.log"
    path.write_bytes(data)
    assert main(["explain", "--file", str(path)]) == 1
    out, err = capsys.readouterr()
    assert out.startswith("FAILURE cuda-library-missing") and "note:" not in err
    monkeypatch.setattr("sys.stdin", _Stdin(data))
    assert main(["explain"]) == 1
    assert capsys.readouterr().out.startswith("FAILURE cuda-library-missing")


def test_binary_data_is_searched_but_said_not_to_be_a_log(tmp_path, capsys):
    """A core dump may hold the line (searched, exit 0 when it holds none), but its "nothing
    wrong" is no verdict on a log: stderr says it is not one."""
    path = tmp_path / "core.log"
    path.write_bytes(bytes(range(256)) * 8)
    assert main(["explain", "--file", str(path)]) == 0
    assert "core.log is not a text log (it holds binary data)" in capsys.readouterr().err
    path.write_bytes(b"\x00\x7fELF\x00\x00" + LOG.encode() + b"\x00\x00\xff")
    assert main(["explain", "--file", str(path)]) == 1  # the text inside it still counts
    out, err = capsys.readouterr()
    assert out.startswith("FAILURE cuda-library-missing") and "not a text log" in err


def test_latin1_text_is_no_binary(tmp_path, capsys):
    path = tmp_path / "fr.log"
    path.write_bytes("étape 3/10 - perte 0,25\n".encode("latin-1"))
    assert main(["explain", "--file", str(path)]) == 0
    assert "note:" not in capsys.readouterr().err
