"""`airtrace reproduce`: the seed studies' figures beside what the simulator measures."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from airtrace import cli, reproduce

CLI = [sys.executable, "-m", "airtrace.cli"]


def test_without_a_study_it_lists_them_and_what_is_not_modelled() -> None:
    done = subprocess.run([*CLI, "reproduce"], capture_output=True, text=True, check=True)
    assert "bachmann" in reproduce.STUDIES
    for key in [*reproduce.STUDIES, *reproduce.NOT_MODELLED]:
        assert f"  {key} " in done.stdout
    assert ("Not modelled yet" in done.stdout) == bool(reproduce.NOT_MODELLED)


def test_a_study_not_modelled_is_listed_as_such_and_refused(monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(reproduce, "NOT_MODELLED", {"someone": "needs a model of something"})
    assert cli.main(["reproduce"]) == 0
    assert "Not modelled yet:\n  someone         needs a model of something\n" in capsys.readouterr().out
    assert cli.main(["reproduce", "someone"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "someone is not modelled: needs a model of something" in err


def test_an_unknown_study_is_a_one_line_error() -> None:
    done = subprocess.run([*CLI, "reproduce", "nosuch"], capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "error" in done.stderr


#: Bachmann's Table 1 (throughput, Mbit/s, stream and on-off) and Fig. 19 (Mbit/s per rate).
BACHMANN_TABLE_1 = {23: (1.2463, 1.2279), 14: (1.2290, 1.2364), 15: (1.1998, 1.2348), 16: (0.6377, 1.0334)}
BACHMANN_FIG_19 = {"11": 5.5, "5.5": 2.8, "2": 1.4, "1": 0.7}


def test_bachmann_json_names_table_1_and_the_rate_fallback_with_verdicts() -> None:
    done = subprocess.run([*CLI, "reproduce", "bachmann", "--seeds", "2", "--json"], capture_output=True, text=True, check=True)
    (study,) = json.loads(done.stdout)
    figures = {f["name"]: f for f in study["figures"]}
    rooms = [f"throughput, room {r}, {p}" for r in BACHMANN_TABLE_1 for p in ("stream", "on-off")]
    rates = [f"udp throughput, {r} Mbit/s" for r in BACHMANN_FIG_19]
    assert list(figures) == [*rooms, *rates]
    published = [v for pair in BACHMANN_TABLE_1.values() for v in pair] + list(BACHMANN_FIG_19.values())
    assert [f["published_low"] for f in figures.values()] == published
    for f in figures.values():
        assert len(f["measured"]) == 2 and f["unit"] == "Mbit/s", f
        assert f["tolerance"] == reproduce.TOLERANCE and f["verdict"] in ("within", "outside"), f
        assert (f["reason"] is None) == (f["verdict"] == "within"), f
    # Table 1 in shape in the good rooms: the two patterns within 5 % of each other.
    for room in (23, 14, 15):
        stream, onoff = (figures[f"throughput, room {room}, {p}"]["mean"] for p in ("stream", "on-off"))
        assert abs(onoff / stream - 1) < 0.05, (room, stream, onoff)
    # The walk's throughput falls with each rate it steps down to.
    walk = [figures[name]["mean"] for name in rates]
    assert walk == sorted(walk, reverse=True), walk


def test_bachmann_runs_a_subset_of_rooms_and_draws_table_1_with_out(tmp_path) -> None:  # type: ignore[no-untyped-def]
    result = reproduce.reproduce("bachmann", seeds=1, out=tmp_path, rooms=[16], walk=False, sets=['duration="30 s"'])
    names = [f.name for f in result.figures]
    assert names == ["throughput, room 16, stream", "throughput, room 16, on-off"]
    assert all(len(f.measured) == 1 and f.measured[0] > 0 for f in result.figures)
    plot = tmp_path / "bachmann" / "table1-throughput.png"
    assert str(plot) in result.files
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    for kept in ("bachmann_room16-stream", "bachmann_room16-on-off"):
        assert 'duration = "30 s"' in (tmp_path / "bachmann" / kept / "scenario.toml").read_text()


def test_kuang_measures_data_ack_collisions_on_a_loss_free_channel() -> None:
    done = subprocess.run([*CLI, "reproduce", "kuang", "--seeds", "2", "--json"], capture_output=True, text=True, check=True)
    (study,) = json.loads(done.stdout)
    figures = {f["name"]: f for f in study["figures"]}
    tcp, udp = figures["MAC retry rate"], figures["MAC retry rate, udp"]
    assert len(tcp["measured"]) == 2
    # Collisions only (the channel loses nothing): a few per cent of the frames for
    # TCP, whose ACKs come back over the air; a UDP stream sends nothing back.
    assert 3.0 < tcp["mean"] < 6.0
    assert udp["mean"] <= tcp["mean"] / 3
    assert figures["udp retry rate / tcp's"]["mean"] <= 1 / 3
    assert figures["throughput without MAC retransmission"]["mean"] < 0


def test_kuang_at_100_m_mimd_thrashes_and_arf_avoids_most_of_the_loss() -> None:
    done = subprocess.run([*CLI, "reproduce", "kuang", "--seeds", "1", "--json"], capture_output=True, text=True, check=True)
    (study,) = json.loads(done.stdout)
    mean = {f["name"]: f["mean"] for f in study["figures"]}
    mimd, fixed = mean["throughput at 100 m, mimd"], mean["throughput at 100 m, fixed 5.5 Mbit/s"]
    # The prober changes rate hundreds of times a second, and TCP gets well below what
    # the best fixed rate gives it (seed 1: 2.01 against 3.22 Mbit/s).
    assert mean["rate changes per second at 100 m, mimd"] > 100
    assert mimd < 0.75 * fixed
    # ARF (3.04) and Minstrel (2.79) win back more than half of what MIMD loses.
    for control in ("arf", "minstrel"):
        assert mean[f"throughput at 100 m, {control}"] > mimd + 0.5 * (fixed - mimd), control


def test_holland_vaidya_chain_table_and_manet_figures() -> None:
    done = subprocess.run(
        [*CLI, "reproduce", "holland-vaidya", "--seeds", "1", "--patterns", "2", "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    (study,) = json.loads(done.stdout)
    figures = {f["name"]: f for f in study["figures"]}
    chain = [f"chain throughput, {n} hops" for n in range(1, 11)]
    manet = [
        f"{kind}, {v} m/s"
        for v in reproduce.HOLLAND_VAIDYA_SPEEDS
        for kind in ("expected throughput", "mean throughput, reno", "mean throughput, elfn")
    ]
    split = [
        "total throughput, tcp",
        "total throughput, split-tcp",
        "split-tcp throughput gain",
        "unfairness, tcp",
        "unfairness, split-tcp",
    ]
    assert chain + manet + split == list(figures)
    means = [figures[name]["mean"] for name in chain]
    # Throughput falls with every hop up to the point where distant parts of the chain
    # run in parallel. Against Table 1 (docs/dsr.md): over 3 seeds all but 3 and 4 hops
    # are within 15 %, those two 19-26 % low (the open item of the chain table). This
    # runs one seed, which moves 5-10 hops by up to 10 %: 1, 2 and 6-8 hops are checked
    # within 15 %, the others within 35 %.
    assert all(a > b for a, b in zip(means[:4], means[1:5]))
    for n, published in enumerate(reproduce.HOLLAND_VAIDYA_CHAIN, start=1):
        bound = 0.15 if n in (1, 2, 6, 7, 8) else 0.35
        assert abs(means[n - 1] / published - 1) < bound, (n, means[n - 1], published)
    # Two patterns per speed, Reno and ELFN: one throughput per pattern, never above the
    # one-hop chain, and the expected throughput is a weighted mean of the chain's.
    for name in manet:
        measured = figures[name]["measured"]
        assert len(measured) == 2, name
        assert all(0 <= x <= means[0] * 1.05 for x in measured), (name, measured)
    assert any(figures[f"mean throughput, elfn, {v} m/s"]["mean"] > 0 for v in reproduce.HOLLAND_VAIDYA_SPEEDS)
    # Split-TCP (docs/split-tcp.md): three flows in the MANET, the same two patterns with
    # and without proxies following the route; the proxies share the channel more evenly.
    total = {kind: figures[f"total throughput, {kind}"] for kind in ("tcp", "split-tcp")}
    for kind, figure in total.items():
        assert len(figure["measured"]) == 2 and all(0 < t < 3 * means[0] for t in figure["measured"]), (kind, figure)
    gain = figures["split-tcp throughput gain"]["mean"]
    assert gain == pytest.approx((total["split-tcp"]["mean"] / total["tcp"]["mean"] - 1) * 100)
    unfair = {kind: figures[f"unfairness, {kind}"]["measured"] for kind in ("tcp", "split-tcp")}
    assert all(len(u) == 2 and all(0 <= x <= 1 for x in u) for u in unfair.values()), unfair
    assert sum(unfair["split-tcp"]) < sum(unfair["tcp"]), unfair
    assert any("95 % bootstrap interval over patterns" in note for note in study["notes"]), study["notes"]


def test_split_tcp_gain_is_the_mean_total_against_plain_tcps_with_a_bootstrap_interval() -> None:
    runs = [
        reproduce.SplitTcpPattern(1, [100.0, 100.0, 0.0], [150.0, 100.0, 50.0]),
        reproduce.SplitTcpPattern(2, [300.0, 0.0, 0.0], [200.0, 50.0, 50.0]),
    ]
    # 600 against 500 kbit/s in all.
    assert reproduce.split_tcp_gain(runs) == pytest.approx(20.0)
    low, high = reproduce.bootstrap_interval(runs, resamples=1000)
    # Resampled, the two patterns give +0 % (2 twice), +20 % or +50 % (1 twice).
    assert (low, high) == (pytest.approx(0.0), pytest.approx(50.0))
    assert reproduce.bootstrap_interval(runs, resamples=1000) == (low, high), "seeded"
    same = [reproduce.SplitTcpPattern(p, [100.0], [110.0]) for p in (1, 2, 3)]
    assert reproduce.bootstrap_interval(same, resamples=100) == (pytest.approx(10.0), pytest.approx(10.0))
    assert reproduce.split_tcp_gain([reproduce.SplitTcpPattern(1, [0.0], [5.0])]) == 0.0


def test_the_split_tcp_scenario_is_the_manet_with_three_following_flows() -> None:
    import tomllib

    manet = reproduce.scenario("holland_vaidya_manet")
    text = reproduce.split_tcp_scenario(manet)
    parsed = tomllib.loads(text)
    assert parsed["network"] == tomllib.loads(manet.read_text())["network"]
    flows = parsed["flow"]
    assert [(f["from"], f["to"]) for f in flows] == list(reproduce.SPLIT_TCP_PAIRS)
    assert all(f["split"] == {"every": reproduce.SPLIT_TCP_EVERY, "follow": True} for f in flows)
    assert all(f["tcp"] == tomllib.loads(manet.read_text())["flow"][0]["tcp"] for f in flows)


def test_unfairness_is_zero_for_equal_shares_and_one_for_a_monopoly() -> None:
    assert reproduce.unfairness([100.0, 100.0, 100.0]) == 0.0
    assert reproduce.unfairness([300.0, 0.0, 0.0]) == pytest.approx(1.0)
    assert reproduce.unfairness([0.0, 0.0]) == 0.0
    # Jain's index of (1, 3) is 16 / 20 = 0.8: unfairness 0.2 / 0.5.
    assert reproduce.unfairness([1.0, 3.0]) == pytest.approx(0.4)


def test_a_pattern_count_below_one_is_refused() -> None:
    done = subprocess.run([*CLI, "reproduce", "holland-vaidya", "--patterns", "0"], capture_output=True, text=True)
    assert done.returncode == 2
    assert "--patterns must be at least 1" in done.stderr


def test_ludwig_finds_rlp_fully_used_and_resets_that_stall_the_receiver() -> None:
    result = reproduce.reproduce("ludwig", seeds=1)
    figures = {f.name: f for f in result.figures}
    # Flow control closes one RLP slot in five at 960 B/s: that is not TCP leaving the
    # link idle (it read 80 % before the utilization knew RLP's slots).
    (utilization,) = figures["utilization of the RLP link"].measured
    assert utilization >= 98.0
    stalls = figures["receiver's stall around a reset, header compression on"].measured
    assert stalls and min(stalls) > 5.0
    assert "| utilization of the RLP link |" in result.markdown()


def test_out_keeps_the_headline_bundles_and_their_plots(tmp_path) -> None:  # type: ignore[no-untyped-def]
    result = reproduce.reproduce("kuang", seeds=1, out=tmp_path)
    kept = [p for p in result.files if not p.endswith(".png")]
    plots = [p for p in result.files if p.endswith(".png")]
    assert len(kept) == 3 and len(plots) == 6
    for bundle in kept:
        assert (tmp_path / "kuang" / bundle.rsplit("/", 1)[1] / "meta.json").exists()
    for png in plots:
        with open(png, "rb") as f:
            assert f.read(8) == b"\x89PNG\r\n\x1a\n"


def test_a_figure_is_judged_within_or_outside_its_published_numbers() -> None:
    near = reproduce.Figure("near", "54.2 KB/s", [50.0, 52.0], "KB/s", 1, 54.2)
    far = reproduce.Figure("far", "4.58–4.73 %", [3.5], "%", 2, 4.58, 4.73)
    explained = reproduce.Figure("explained", "−23 %", [-10.0], "%", 0, -23, reason="TCP recovers the rest")
    words = reproduce.Figure("words", "the upper bound", [800.0], "kbit/s", 1)
    assert (near.published_high, near.verdict(), near.why()) == (54.2, "within", None)
    assert (far.verdict(), far.why()) == ("outside", "not established")
    assert (explained.verdict(), explained.why()) == ("outside", "TCP recovers the rest")
    assert (words.verdict(), words.why()) == ("no published number", None)
    # The tolerance is relative to the published number, beyond either end of its range.
    assert reproduce.Figure("edge", "1–2", [2 * (1 + reproduce.TOLERANCE) - 1e-9], "", 2, 1, 2).verdict() == "within"


def test_reproduce_prints_the_verdict_and_the_reason_for_each_figure_outside() -> None:
    result = reproduce.Result("s", "A study", "its setup")
    result.figures += [
        reproduce.Figure("retry rate", "4.58–4.73 %", [3.5], "%", 2, 4.58, 4.73, "the server's ACK policy"),
        reproduce.Figure("goodput", "11.27 Mbit/s", [11.5], "Mbit/s", 2, 11.27),
        reproduce.Figure("expected", "the upper bound", [800.0], "kbit/s", 1),
    ]
    (retry, goodput, expected) = result.to_json()["figures"]
    assert (retry["published_low"], retry["published_high"], retry["tolerance"]) == (4.58, 4.73, reproduce.TOLERANCE)
    assert (retry["verdict"], retry["reason"]) == ("outside", "the server's ACK policy")
    assert (goodput["verdict"], goodput["reason"]) == ("within", None)
    assert (expected["published_low"], expected["verdict"]) == (None, "no published number")
    text, markdown = result.text(), result.markdown()
    assert "| retry rate | 4.58–4.73 % | 3.50 % | outside ±15 % |" in markdown
    assert "| expected | the upper bound | 800.0 kbit/s | no published number |" in markdown
    assert "- Outside: retry rate: the server's ACK policy." in markdown
    assert "  goodput     11.27 Mbit/s     11.50 Mbit/s  within ±15 %\n" in text
    assert "Outside: retry rate: the server's ACK policy." in text



def test_reproduce_json_gives_the_published_numbers_and_a_verdict_per_figure() -> None:
    done = subprocess.run([*CLI, "reproduce", "kuang", "--seeds", "1", "--json"], capture_output=True, text=True, check=True)
    (study,) = json.loads(done.stdout)
    numbers = {f["name"]: (f["published_low"], f["published_high"]) for f in study["figures"]}
    assert numbers == {
        "MAC retry rate": (4.58, 4.73),
        "MAC retry rate, udp": (0.47, 0.98),
        "udp retry rate / tcp's": (0.10, 0.21),
        "throughput without MAC retransmission": (-23, -23),
        # Kuang et al. give no numbers for the laptop at 100 m.
        "throughput at 100 m, mimd": (None, None),
        "throughput at 100 m, fixed 5.5 Mbit/s": (None, None),
        "throughput at 100 m, arf": (None, None),
        "throughput at 100 m, minstrel": (None, None),
        "rate changes per second at 100 m, mimd": (None, None),
    }
    for f in study["figures"]:
        if f["published_low"] is None:
            assert (f["verdict"], f["reason"]) == ("no published number", None), f
            continue
        assert f["tolerance"] == reproduce.TOLERANCE and f["verdict"] in ("within", "outside"), f
        assert (f["reason"] is None) == (f["verdict"] == "within"), f
