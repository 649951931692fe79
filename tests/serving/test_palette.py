"""The entity colours of the page and of ``ner-predict --format html`` (render.js): every two of
the first four (the four CoNLL types) are clearly different, to each other and to the white page,
in normal vision and in simulated protanopia, deuteranopia and tritanopia; the rest differ too;
and the dark text on each has a contrast of 7:1 or more (WCAG AAA)."""

import itertools
import math
import re

import numpy as np
import pytest

from ner.serving.html import PAGE

# Machado, Oliveira and Fernandes (2009), severity 1, applied to linear sRGB.
VISIONS = {
    "normal": np.eye(3),
    "protanopia": np.array(
        [
            [0.152286, 1.052583, -0.204868],
            [0.114503, 0.786281, 0.099216],
            [-0.003882, -0.048116, 1.051998],
        ]
    ),
    "deuteranopia": np.array(
        [
            [0.367322, 0.860646, -0.227968],
            [0.280085, 0.672501, 0.047413],
            [-0.011820, 0.042940, 0.968881],
        ]
    ),
    "tritanopia": np.array(
        [
            [1.255528, -0.076749, -0.178779],
            [-0.078411, 0.930809, 0.147602],
            [0.004733, 0.691367, 0.303900],
        ]
    ),
}
SRGB_TO_XYZ = np.array(
    [
        [0.4124564, 0.3575761, 0.1804375],
        [0.2126729, 0.7151522, 0.0721750],
        [0.0193339, 0.1191920, 0.9503041],
    ]
)
D65 = np.array([0.95047, 1.0, 1.08883])
TEXT, PAGE_BACKGROUND = "#222222", "#ffffff"


def palette() -> list[str]:
    script = (PAGE / "render.js").read_text(encoding="utf-8")
    body = re.search(r"const NER_PALETTE = \[(.*?)\];", script, re.DOTALL)
    assert body is not None
    return re.findall(r'"(#[0-9a-fA-F]{6})"', body.group(1))


def linear(colour: str) -> np.ndarray:
    srgb = np.array([int(colour[i : i + 2], 16) for i in (1, 3, 5)]) / 255
    return np.where(srgb <= 0.04045, srgb / 12.92, ((srgb + 0.055) / 1.055) ** 2.4)


def lab(rgb: np.ndarray) -> tuple[float, float, float]:
    """CIELAB (D65) of linear sRGB."""
    xyz = SRGB_TO_XYZ @ np.clip(rgb, 0, 1) / D65
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return 116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])


def ciede2000(first: tuple[float, float, float], second: tuple[float, float, float]) -> float:
    """The CIEDE2000 colour difference (Sharma, Wu and Dalal 2005)."""
    (l1, a1, b1), (l2, a2, b2) = first, second
    mean_c = (math.hypot(a1, b1) + math.hypot(a2, b2)) / 2
    g = 0.5 * (1 - math.sqrt(mean_c**7 / (mean_c**7 + 25**7)))
    c1, c2 = math.hypot((1 + g) * a1, b1), math.hypot((1 + g) * a2, b2)
    h1 = math.degrees(math.atan2(b1, (1 + g) * a1)) % 360
    h2 = math.degrees(math.atan2(b2, (1 + g) * a2)) % 360
    dh = 0.0 if c1 * c2 == 0 else (h2 - h1 + 180) % 360 - 180
    big_dh = 2 * math.sqrt(c1 * c2) * math.sin(math.radians(dh / 2))
    mean_l, mean_cp = (l1 + l2) / 2, (c1 + c2) / 2
    if c1 * c2 == 0:
        mean_h = h1 + h2
    elif abs(h1 - h2) <= 180:
        mean_h = (h1 + h2) / 2
    else:
        mean_h = (h1 + h2 + 360) / 2 if h1 + h2 < 360 else (h1 + h2 - 360) / 2
    t = (
        1
        - 0.17 * math.cos(math.radians(mean_h - 30))
        + 0.24 * math.cos(math.radians(2 * mean_h))
        + 0.32 * math.cos(math.radians(3 * mean_h + 6))
        - 0.20 * math.cos(math.radians(4 * mean_h - 63))
    )
    s_l = 1 + 0.015 * (mean_l - 50) ** 2 / math.sqrt(20 + (mean_l - 50) ** 2)
    s_c, s_h = 1 + 0.045 * mean_cp, 1 + 0.015 * mean_cp * t
    r_c = 2 * math.sqrt(mean_cp**7 / (mean_cp**7 + 25**7))
    r_t = -math.sin(math.radians(60 * math.exp(-(((mean_h - 275) / 25) ** 2)))) * r_c
    dl, dc, dhh = (l2 - l1) / s_l, (c2 - c1) / s_c, big_dh / s_h
    return math.sqrt(dl**2 + dc**2 + dhh**2 + r_t * dc * dhh)


def smallest_difference(colours: list[str]) -> tuple[float, str, str, str]:
    """The smallest CIEDE2000 difference of two of `colours` in any vision, and where."""
    return min(
        (ciede2000(lab(matrix @ linear(a)), lab(matrix @ linear(b))), vision, a, b)
        for vision, matrix in VISIONS.items()
        for a, b in itertools.combinations(colours, 2)
    )


def contrast(a: str, b: str) -> float:
    """WCAG 2 contrast ratio."""
    light, dark = sorted(
        (float(linear(c) @ [0.2126, 0.7152, 0.0722]) for c in (a, b)), reverse=True
    )
    return (light + 0.05) / (dark + 0.05)


def test_ciede2000_matches_published_pairs() -> None:
    # Sharma, Wu and Dalal (2005), table 1, pairs 1 and 17.
    assert ciede2000((50, 2.6772, -79.7751), (50, 0, -82.7485)) == pytest.approx(2.0425, abs=1e-4)
    assert ciede2000((50, 2.5, 0), (73, 25, -18)) == pytest.approx(27.1492, abs=1e-4)


def test_the_first_four_types_differ_for_every_reader() -> None:
    difference, vision, a, b = smallest_difference([*palette()[:4], PAGE_BACKGROUND])
    assert difference >= 10, f"{a} and {b} differ by {difference:.1f} in {vision}"


def test_every_colour_differs_for_every_reader() -> None:
    colours = palette()
    assert len(colours) >= 6
    difference, vision, a, b = smallest_difference([*colours, PAGE_BACKGROUND])
    assert difference >= 5, f"{a} and {b} differ by {difference:.1f} in {vision}"


def test_dark_text_is_readable_on_every_colour() -> None:
    assert min(contrast(TEXT, colour) for colour in palette()) >= 7
    style = (PAGE / "style.css").read_text(encoding="utf-8")
    for rule in ("mark.ner-entity", ".ner-legend-item"):
        assert re.search(re.escape(rule) + r" \{[^}]*color: #222;", style), rule
