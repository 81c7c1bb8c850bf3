"""The work models (`hardware.WORK`): each against a hand calculation from the model's published
architecture, and every benchmark of every supported round either modelled or said why not."""

from __future__ import annotations

import pytest

from mlperf_audit import hardware, rulesets


def test_every_benchmark_of_every_round_is_modelled_or_says_why_not():
    benchmarks = {b for name in rulesets.SUPPORTED for b in rulesets.get(name).benchmarks}
    assert benchmarks - set(hardware.WORK) - set(hardware.NOT_MODELLED) == set()
    assert set(hardware.WORK) & set(hardware.NOT_MODELLED) == set()
    assert all(reason.strip() for reason in hardware.NOT_MODELLED.values())


def test_llama31_8b_by_hand():
    # per layer: q 4096², k and v 4096·1024 each, o 4096², three FFN matrices 4096·14336
    per_layer = 2 * 4096**2 + 2 * 4096 * 1024 + 3 * 4096 * 14336  # 218,103,808
    matmul = 32 * per_layer + 4096 * 128_256  # + the output layer: 7,504,658,432
    assert matmul == pytest.approx(7.50e9, rel=1e-3)
    per_token = 6 * matmul + 12 * 32 * 4096 * 8192  # 4.503e10 + 1.288e10
    assert hardware.WORK["llama31_8b"].flops_per_unit == pytest.approx(per_token * 8192, rel=1e-3)
    assert hardware.WORK["llama31_8b"].flops_per_unit == pytest.approx(4.744e14, rel=1e-3)


def test_llama31_405b_by_hand():
    per_layer = 2 * 16384**2 + 2 * 16384 * 1024 + 3 * 16384 * 53248
    matmul = 126 * per_layer + 16384 * 128_256
    assert matmul == pytest.approx(403.7e9, rel=1e-3)
    assert hardware.WORK["llama31_405b"].flops_per_unit == pytest.approx(
        8192 * (6 * matmul + 12 * 126 * 16384 * 8192), rel=1e-3
    )
    assert hardware.WORK["llama31_405b"].flops_per_unit == pytest.approx(2.150e16, rel=1e-3)


def test_resnet_by_hand():
    # 4.1e9 multiply-adds forward at 224x224 = 8.2e9 FLOPs; x3 for training; x ImageNet's 1,281,167 images
    assert hardware.WORK["resnet"].flops_per_unit == pytest.approx(3.152e16, rel=1e-3)


def test_gpt3_by_hand():
    assert hardware.WORK["gpt3"].flops_per_unit == pytest.approx(6 * 175e9 + 12 * 96 * 12288 * 2048, rel=1e-3)


def test_a_utilisation_by_hand():
    # NVIDIA's v5.0 eos-dfw_n64 llama31_405b: 276,480 samples in 230.62 min on 512 H100 (FP8 1978.9 TFLOP/s)
    h100 = hardware.match("NVIDIA H100-SXM5-80GB")
    assert h100 is not None
    value = hardware.utilisation(276_480, 230.62, "llama31_405b", 512, h100)
    assert value == pytest.approx(276_480 * 2.150e16 / (230.62 * 60) / 512 / 1978.9e12, rel=1e-3)
    assert 0.40 < value < 0.43  # 42%: what the best H100 results reach


def test_only_the_exact_models_can_make_an_error():
    from mlperf_audit_rules.plausibility import EXACT_WORK

    assert EXACT_WORK == {"gpt3", "llama2_70b_lora", "llama31_8b", "llama31_405b"}
    assert {hardware.WORK[b].kind for b in set(hardware.WORK) - EXACT_WORK} == {"an upper bound", "approximate"}
