"""A read-only install, used by an unprivileged user with no writable home, imports and fits.

The tests run the package that this test session imported, as user ``nobody`` (uid 65534),
from a root-owned location it cannot write to. They need root (to switch user) and
``unshare``/``setpriv`` (util-linux); elsewhere they skip. The interpreter often lives under
root's home (pyenv), which ``nobody`` cannot enter, so the child runs in a private mount
namespace where ``/root`` is an empty world-readable tmpfs with only ``~/.pyenv`` bound back.
"""

import os
import shutil
import subprocess
import sys
import tempfile

import pytest

import skdpgd

FIT = """
import numpy as np, warnings
warnings.simplefilter("ignore")
import skdpgd, numba
from skdpgd import DPLogisticRegression, DPSGDClassifier
from skdpgd._compute.small_problems import SMALL_PROBLEM_ENTRIES
# above the size that numpy reduces, so that the numba kernels compile and are cached
n = SMALL_PROBLEM_ENTRIES // 3 + 1
X = np.random.default_rng(0).normal(size=(n, 3)) / 3
y = (X[:, 0] > 0).astype(int)
DPLogisticRegression(data_norm=1.0, classes=[0, 1], random_state=0).fit(X, y)
DPSGDClassifier(data_norm=1.0, classes=[0, 1], n_samples=n, random_state=0).fit(X, y)
print("cache:", numba.config.CACHE_DIR or "-", skdpgd.__file__)
"""


def _run_as_nobody(env_extra, lock_tmp=False):
    if os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("setpriv"):
        pytest.skip("needs root, unshare and setpriv to run as an unprivileged user")
    package_parent = os.path.dirname(os.path.dirname(skdpgd.__file__))
    if os.access(package_parent, os.W_OK) and os.stat(package_parent).st_uid != 0:
        pytest.skip("the package is not in a root-owned location")
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": "/nonexistent",
        "PYTHONPATH": package_parent,
        "PYTHONDONTWRITEBYTECODE": "1",
        **env_extra,
    }
    inner = (
        'set -e; view=$(mktemp -d); mount --bind /root "$view"; '
        "mount -t tmpfs -o mode=755 none /root; "
        'if [ -d "$view/.pyenv" ]; then mkdir -p /root/.pyenv; '
        'mount --bind "$view/.pyenv" /root/.pyenv; fi; '
        # temp dirs made read-only in place (their contents, such as a venv, stay visible)
        + (
            "for d in /tmp /var/tmp /usr/tmp; do if [ -d $d ]; then "
            "mount --bind $d $d; mount -o remount,bind,ro $d; fi; done; "
            if lock_tmp
            else ""
        )
        + "exec setpriv --reuid=65534 --regid=65534 --clear-groups env -i "
        + " ".join(f"{k}={v}" for k, v in env.items())
        + f' {sys.executable} -c "$FIT"'
    )
    out = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "sh", "-c", inner],
        capture_output=True,
        text=True,
        timeout=600,
        cwd="/",
        env={**os.environ, "FIT": FIT},
    )
    if out.returncode != 0 and "unshare failed" in out.stderr:
        pytest.skip(f"no mount namespaces here: {out.stderr.strip()}")
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


def test_read_only_install_caches_in_a_per_user_temp_dir():
    tmp = tempfile.mkdtemp(prefix="skdpgd-install-test-", dir="/tmp")
    try:
        os.chmod(tmp, 0o1777)
        stdout = _run_as_nobody({"TMPDIR": tmp})
        cache = os.path.join(tmp, "skdpgd-numba-65534")
        assert f"cache: {cache}" in stdout
        assert any(name.endswith(".nbi") for _, _, files in os.walk(cache) for name in files)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def test_read_only_install_without_any_writable_dir_compiles_without_cache():
    # every temp dir is read-only in the child's mount namespace, home is missing
    stdout = _run_as_nobody({"XDG_CACHE_HOME": "/nonexistent"}, lock_tmp=True)
    assert "cache: -" in stdout
