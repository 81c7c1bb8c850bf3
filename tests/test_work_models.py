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


def test_deepseekv3_671b_by_hand():
    # multi-head latent attention a layer: q down 7168x1536 and up 1536x(128 heads x 192), kv down
    # 7168x(512+64) and up 512x(128 x (128+128)), output 128x128x7168
    attention = 7168 * 1536 + 1536 * 128 * 192 + 7168 * 576 + 512 * 128 * 256 + 128 * 128 * 7168
    assert attention == pytest.approx(187.0e6, rel=1e-3)
    dense_ffn = 3 * 7168 * 18432  # the first 3 layers
    moe_ffn = (8 + 1) * 3 * 7168 * 2048  # 8 routed and 1 shared expert in the other 58
    matmul = 61 * attention + 3 * dense_ffn + 58 * moe_ffn + 7168 * 129_280
    assert matmul == pytest.approx(36.5e9, rel=1e-3)
    # with the input embedding, a lookup, the paper's 37B activated
    assert matmul + 7168 * 129_280 == pytest.approx(37.4e9, rel=1e-2)
    per_token = 6 * matmul + 3 * 61 * 2 * 4096 * 128 * (192 + 128)
    assert hardware.WORK["deepseekv3_671b"].flops_per_unit == pytest.approx(4096 * per_token, rel=1e-6)
    assert hardware.WORK["deepseekv3_671b"].flops_per_unit == pytest.approx(1.149e15, rel=1e-3)
    assert hardware.WORK["deepseekv3_671b"].state_bytes == pytest.approx(671e9 * 12)


def test_gpt_oss_20b_by_hand():
    attention = 24 * (2880 * 64 * 64 * 2 + 2880 * 8 * 64 * 2)  # q and o, k and v
    experts = 24 * 4 * 3 * 2880 * 2880  # 4 of 32 SwiGLU experts active
    unembedding = 2880 * 201_088
    # the model card's table 1: attention 0.64B, MLP 19.12B of which 4/32 active, 3.61B active
    assert attention == pytest.approx(0.64e9, rel=1e-2)
    assert experts * 32 / 4 == pytest.approx(19.11e9, rel=1e-3)
    assert attention + experts + unembedding == pytest.approx(3.61e9, rel=2e-3)
    per_token = 6 * (attention + experts + unembedding) + 12 * 12 * 4096 * 8192 + 12 * 12 * 4096 * 128
    assert hardware.WORK["gpt_oss_20b"].flops_per_unit == pytest.approx(8192 * per_token, rel=1e-6)
    assert hardware.WORK["gpt_oss_20b"].flops_per_unit == pytest.approx(2.174e14, rel=1e-3)


def test_mixtures_of_experts_are_approximate_and_fit_their_reference_platforms():
    # no published round confirms their unit: a ceiling at most, never AUD002's error
    assert {hardware.WORK[b].kind for b in ("deepseekv3_671b", "gpt_oss_20b")} == {"approximate"}
    # the RCPs' platforms hold the state: 64 GB300 nodes (256 GPUs) for deepseek, one MI355X for gpt-oss
    gb300, mi355x = hardware.match("NVIDIA Blackwell Ultra GPU (GB300)"), hardware.match("AMD Instinct MI355X")
    assert gb300 is not None and gb300.hbm_gb and mi355x is not None and mi355x.hbm_gb
    assert hardware.WORK["deepseekv3_671b"].state_bytes / 256 / 1e9 < gb300.hbm_gb
    assert hardware.WORK["gpt_oss_20b"].state_bytes / 1 / 1e9 < mi355x.hbm_gb
    # and a run of the RCP's mean (deepseek at 16384: 774,144 samples) in an hour on them is a
    # plausible share of the BF16 peak
    value = hardware.utilisation(774_144, 60.0, "deepseekv3_671b", 256, gb300, gb300.bf16_tflops)
    assert value is not None and 0.2 < value < 0.6
