"""Which CPU's MKL blocking ``core/blas_order.py`` reproduces: read from the L2 cache size Linux reports."""
from gradiente.core import blas_order


def _cache(root, index, level, size):
    folder = root / f"index{index}"
    folder.mkdir()
    (folder / "level").write_text(f"{level}\n")
    (folder / "size").write_text(f"{size}\n")


def test_the_l2_size_is_read_from_the_cache_description(tmp_path):
    _cache(tmp_path, 0, 1, "48K")
    _cache(tmp_path, 2, 2, "2048K")
    _cache(tmp_path, 3, 3, "307200K")
    (tmp_path / "uevent").write_text("")
    assert blas_order._cpu_l2_bytes(str(tmp_path)) == 2 << 20


def test_no_description_reads_as_no_cache(tmp_path):
    assert blas_order._cpu_l2_bytes(str(tmp_path / "missing")) == 0
    _cache(tmp_path, 0, 2, "garbled")
    assert blas_order._cpu_l2_bytes(str(tmp_path)) == 0


def test_the_blocking_is_one_of_the_measured_two():
    assert blas_order.BLOCK in (192, 384)


def test_the_override_takes_only_the_measured_blockings(monkeypatch):
    import pytest
    monkeypatch.setenv("GRADIENTE_MKL_BLOCK", "192")
    assert blas_order._measured_blocking() == 192
    monkeypatch.setenv("GRADIENTE_MKL_BLOCK", "256")
    with pytest.warns(UserWarning, match="ignored"):
        assert blas_order._measured_blocking() in (192, 384)
