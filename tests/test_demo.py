"""The demo (python -m skdpgd) explains every label it prints (issue 23 item 5)."""

import re

from skdpgd.__main__ import _SCHEDULE_WORDS, main


def test_demo_explains_its_labels(capsys):
    main(["--seeds", "1", "--epsilons", "1"])
    out = capsys.readouterr().out
    assert "Labels:" in out
    used = set(re.findall(r"DP eps=\S+ \((\w+), T=\d+\)", out))
    assert used
    for name in used:  # each mechanism shown in a label is explained below the tables
        assert f"  {name}: {_SCHEDULE_WORDS[name]}"[:60] in out
