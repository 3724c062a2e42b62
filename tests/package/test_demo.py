"""The demo (python -m skdpgd) says in words what each private fit returned."""

import re

from skdpgd.__main__ import _MECHANISM_SHORT, _SCHEDULE_WORDS, main


def test_demo_names_what_each_fit_returned_in_words(capsys):
    main(["--seeds", "2", "--epsilons", "0.3", "1"])
    out = capsys.readouterr().out
    assert "Rows:" in out
    rows = re.findall(r"^  DP eps=\S+ .*ms   (.*)$", out, re.M)
    assert len(rows) == 4  # two sets, two epsilons
    words = set(_MECHANISM_SHORT.values())
    for what in rows:  # e.g. "DP Newton (2/2)" or "noisy gradient descent (1/2), ..."
        parts = re.findall(r"([a-zA-Z -]+) \((\d)/2\)", what)
        assert parts and all(p.strip() in words for p, _ in parts)
        assert sum(int(k) for _, k in parts) == 2
    schedules = [
        line.split(":")[0].strip()
        for line in out.splitlines()
        if line.startswith("  ") and ":" in line and line.split(":")[0].strip() in _SCHEDULE_WORDS
    ]
    assert schedules  # the schedules used are explained below the tables
    for name in schedules:
        assert f"  {name}: {_SCHEDULE_WORDS[name]}"[:60] in out
