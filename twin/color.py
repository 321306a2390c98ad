"""Colour conversions for lights: named colours, hs, rgb(w)(w), xy and colour temperature.

A port of the parts of Home Assistant's homeassistant/util/color.py (Apache-2.0) that lights use,
operation for operation, so that the twin's colours equal Home Assistant's to the last bit.
"""

from __future__ import annotations

import colorsys
import math

RGB = tuple[int, int, int]
RGBW = tuple[int, int, int, int]
RGBWW = tuple[int, int, int, int, int]

# CSS3 colour names without spaces ("dark sea green" matches "darkseagreen"), as in Home Assistant.
COLORS: dict[str, RGB] = {
    "aliceblue": (240, 248, 255),
    "antiquewhite": (250, 235, 215),
    "aqua": (0, 255, 255),
    "aquamarine": (127, 255, 212),
    "azure": (240, 255, 255),
    "beige": (245, 245, 220),
    "bisque": (255, 228, 196),
    "black": (0, 0, 0),
    "blanchedalmond": (255, 235, 205),
    "blue": (0, 0, 255),
    "blueviolet": (138, 43, 226),
    "brown": (165, 42, 42),
    "burlywood": (222, 184, 135),
    "cadetblue": (95, 158, 160),
    "chartreuse": (127, 255, 0),
    "chocolate": (210, 105, 30),
    "coral": (255, 127, 80),
    "cornflowerblue": (100, 149, 237),
    "cornsilk": (255, 248, 220),
    "crimson": (220, 20, 60),
    "cyan": (0, 255, 255),
    "darkblue": (0, 0, 139),
    "darkcyan": (0, 139, 139),
    "darkgoldenrod": (184, 134, 11),
    "darkgray": (169, 169, 169),
    "darkgreen": (0, 100, 0),
    "darkgrey": (169, 169, 169),
    "darkkhaki": (189, 183, 107),
    "darkmagenta": (139, 0, 139),
    "darkolivegreen": (85, 107, 47),
    "darkorange": (255, 140, 0),
    "darkorchid": (153, 50, 204),
    "darkred": (139, 0, 0),
    "darksalmon": (233, 150, 122),
    "darkseagreen": (143, 188, 143),
    "darkslateblue": (72, 61, 139),
    "darkslategray": (47, 79, 79),
    "darkslategrey": (47, 79, 79),
    "darkturquoise": (0, 206, 209),
    "darkviolet": (148, 0, 211),
    "deeppink": (255, 20, 147),
    "deepskyblue": (0, 191, 255),
    "dimgray": (105, 105, 105),
    "dimgrey": (105, 105, 105),
    "dodgerblue": (30, 144, 255),
    "firebrick": (178, 34, 34),
    "floralwhite": (255, 250, 240),
    "forestgreen": (34, 139, 34),
    "fuchsia": (255, 0, 255),
    "gainsboro": (220, 220, 220),
    "ghostwhite": (248, 248, 255),
    "gold": (255, 215, 0),
    "goldenrod": (218, 165, 32),
    "gray": (128, 128, 128),
    "green": (0, 128, 0),
    "greenyellow": (173, 255, 47),
    "grey": (128, 128, 128),
    "honeydew": (240, 255, 240),
    "hotpink": (255, 105, 180),
    "indianred": (205, 92, 92),
    "indigo": (75, 0, 130),
    "ivory": (255, 255, 240),
    "khaki": (240, 230, 140),
    "lavender": (230, 230, 250),
    "lavenderblush": (255, 240, 245),
    "lawngreen": (124, 252, 0),
    "lemonchiffon": (255, 250, 205),
    "lightblue": (173, 216, 230),
    "lightcoral": (240, 128, 128),
    "lightcyan": (224, 255, 255),
    "lightgoldenrodyellow": (250, 250, 210),
    "lightgray": (211, 211, 211),
    "lightgreen": (144, 238, 144),
    "lightgrey": (211, 211, 211),
    "lightpink": (255, 182, 193),
    "lightsalmon": (255, 160, 122),
    "lightseagreen": (32, 178, 170),
    "lightskyblue": (135, 206, 250),
    "lightslategray": (119, 136, 153),
    "lightslategrey": (119, 136, 153),
    "lightsteelblue": (176, 196, 222),
    "lightyellow": (255, 255, 224),
    "lime": (0, 255, 0),
    "limegreen": (50, 205, 50),
    "linen": (250, 240, 230),
    "magenta": (255, 0, 255),
    "maroon": (128, 0, 0),
    "mediumaquamarine": (102, 205, 170),
    "mediumblue": (0, 0, 205),
    "mediumorchid": (186, 85, 211),
    "mediumpurple": (147, 112, 219),
    "mediumseagreen": (60, 179, 113),
    "mediumslateblue": (123, 104, 238),
    "mediumspringgreen": (0, 250, 154),
    "mediumturquoise": (72, 209, 204),
    "mediumvioletred": (199, 21, 133),
    "midnightblue": (25, 25, 112),
    "mintcream": (245, 255, 250),
    "mistyrose": (255, 228, 225),
    "moccasin": (255, 228, 181),
    "navajowhite": (255, 222, 173),
    "navy": (0, 0, 128),
    "navyblue": (0, 0, 128),
    "oldlace": (253, 245, 230),
    "olive": (128, 128, 0),
    "olivedrab": (107, 142, 35),
    "orange": (255, 165, 0),
    "orangered": (255, 69, 0),
    "orchid": (218, 112, 214),
    "palegoldenrod": (238, 232, 170),
    "palegreen": (152, 251, 152),
    "paleturquoise": (175, 238, 238),
    "palevioletred": (219, 112, 147),
    "papayawhip": (255, 239, 213),
    "peachpuff": (255, 218, 185),
    "peru": (205, 133, 63),
    "pink": (255, 192, 203),
    "plum": (221, 160, 221),
    "powderblue": (176, 224, 230),
    "purple": (128, 0, 128),
    "red": (255, 0, 0),
    "rosybrown": (188, 143, 143),
    "royalblue": (65, 105, 225),
    "saddlebrown": (139, 69, 19),
    "salmon": (250, 128, 114),
    "sandybrown": (244, 164, 96),
    "seagreen": (46, 139, 87),
    "seashell": (255, 245, 238),
    "sienna": (160, 82, 45),
    "silver": (192, 192, 192),
    "skyblue": (135, 206, 235),
    "slateblue": (106, 90, 205),
    "slategray": (112, 128, 144),
    "slategrey": (112, 128, 144),
    "snow": (255, 250, 250),
    "springgreen": (0, 255, 127),
    "steelblue": (70, 130, 180),
    "tan": (210, 180, 140),
    "teal": (0, 128, 128),
    "thistle": (216, 191, 216),
    "tomato": (255, 99, 71),
    "turquoise": (64, 224, 208),
    "violet": (238, 130, 238),
    "wheat": (245, 222, 179),
    "white": (255, 255, 255),
    "whitesmoke": (245, 245, 245),
    "yellow": (255, 255, 0),
    "yellowgreen": (154, 205, 50),
    "homeassistant": (24, 188, 242),
}


def name_to_rgb(name: str) -> RGB:
    """The rgb of a CSS3 colour name, ignoring case and spaces; ValueError if unknown."""
    rgb = COLORS.get(name.replace(" ", "").lower())
    if not rgb:
        raise ValueError(f"Unknown color {name!r}")
    return rgb


def rgb_to_xy(red: int, green: int, blue: int) -> tuple[float, float]:
    """CIE 1931 xy of an rgb colour, rounded to 3 places (HA's color_RGB_to_xy, no gamut)."""
    if red + green + blue == 0:
        return 0.0, 0.0
    r, g, b = (_linear(channel / 255) for channel in (red, green, blue))
    # Wide RGB D65 conversion formula
    x = r * 0.664511 + g * 0.154324 + b * 0.162028
    y = r * 0.283881 + g * 0.668433 + b * 0.047685
    z = r * 0.000088 + g * 0.072310 + b * 0.986039
    return round(x / (x + y + z), 3), round(y / (x + y + z), 3)


def _linear(value: float) -> float:
    """Undo the sRGB gamma."""
    return pow((value + 0.055) / (1.0 + 0.055), 2.4) if value > 0.04045 else value / 12.92


def xy_to_rgb(x: float, y: float) -> RGB:
    """The full-brightness rgb of an xy colour (HA's color_xy_to_RGB, no gamut)."""
    big_y = 1.0
    if y == 0.0:
        y += 1e-11
    big_x = (big_y / y) * x
    big_z = (big_y / y) * (1 - x - y)
    r = big_x * 1.656492 - big_y * 0.354851 - big_z * 0.255038
    g = -big_x * 0.707196 + big_y * 1.655397 + big_z * 0.036152
    b = big_x * 0.051713 - big_y * 0.121364 + big_z * 1.011530
    r, g, b = (max(0, _gamma(channel)) for channel in (r, g, b))
    top = max(r, g, b)
    if top > 1:
        r, g, b = (channel / top for channel in (r, g, b))
    return int(r * 255), int(g * 255), int(b * 255)


def _gamma(value: float) -> float:
    """Apply the sRGB gamma."""
    return 12.92 * value if value <= 0.0031308 else (1.0 + 0.055) * pow(value, 1.0 / 2.4) - 0.055


def rgb_to_hsv(red: float, green: float, blue: float) -> tuple[float, float, float]:
    """Hue 0-360, saturation and value 0-100 of an rgb colour, rounded to 3 places."""
    h, s, v = colorsys.rgb_to_hsv(red / 255.0, green / 255.0, blue / 255.0)
    return round(h * 360, 3), round(s * 100, 3), round(v * 100, 3)


def rgb_to_hs(red: float, green: float, blue: float) -> tuple[float, float]:
    """Hue and saturation of an rgb colour (HA's color_RGB_to_hs)."""
    h, s, _ = rgb_to_hsv(red, green, blue)
    return h, s


def hsv_to_rgb(hue: float, saturation: float, value: float) -> RGB:
    """The rgb of a hue 0-360, saturation and value 0-100 (HA's color_hsv_to_RGB)."""
    r, g, b = colorsys.hsv_to_rgb(hue / 360, saturation / 100, value / 100)
    return round(r * 255), round(g * 255), round(b * 255)


def hs_to_rgb(hue: float, saturation: float) -> RGB:
    """The full-brightness rgb of a hue and saturation (HA's color_hs_to_RGB)."""
    return hsv_to_rgb(hue, saturation, 100)


def xy_to_hs(x: float, y: float) -> tuple[float, float]:
    """Hue and saturation of an xy colour (HA's color_xy_to_hs)."""
    return rgb_to_hs(*xy_to_rgb(x, y))


def hs_to_xy(hue: float, saturation: float) -> tuple[float, float]:
    """The xy of a hue and saturation (HA's color_hs_to_xy)."""
    return rgb_to_xy(*hs_to_rgb(hue, saturation))


def _match_max_scale(inputs: tuple[float, ...], outputs: tuple[float, ...]) -> tuple[int, ...]:
    """Scale `outputs` so that their largest equals the largest of `inputs`."""
    top = max(outputs)
    factor = 0.0 if top == 0 else max(inputs) / top
    return tuple(round(value * factor) for value in outputs)


def rgb_to_rgbw(red: int, green: int, blue: int) -> RGBW:
    """An rgbw colour whose white channel carries the common part of an rgb colour."""
    white = min(red, green, blue)
    rgbw = _match_max_scale((red, green, blue), (red - white, green - white, blue - white, white))
    return rgbw[0], rgbw[1], rgbw[2], rgbw[3]


def rgbw_to_rgb(red: int, green: int, blue: int, white: int) -> RGB:
    """The rgb an rgbw colour shows."""
    rgb = _match_max_scale((red, green, blue, white), (red + white, green + white, blue + white))
    return rgb[0], rgb[1], rgb[2]


def _midpoint_white(min_kelvin: int, max_kelvin: int) -> tuple[float, float, float]:
    """The rgb of the white halfway (in mireds) between a light's warmest and coldest white."""
    max_mireds = kelvin_to_mired(min_kelvin)
    min_mireds = kelvin_to_mired(max_kelvin)
    return kelvin_to_rgb(mired_to_kelvin(min_mireds + (max_mireds - min_mireds) / 2))


def rgb_to_rgbww(red: int, green: int, blue: int, min_kelvin: int, max_kelvin: int) -> RGBWW:
    """An rgbww colour whose white channels carry the white part of an rgb colour."""
    w_r, w_g, w_b = _midpoint_white(min_kelvin, max_kelvin)
    level = min(red / w_r if w_r else 0, green / w_g if w_g else 0, blue / w_b if w_b else 0)
    rgbww = (
        red - w_r * level,
        green - w_g * level,
        blue - w_b * level,
        round(level * 255),
        round(level * 255),
    )
    c = _match_max_scale((red, green, blue), rgbww)
    return c[0], c[1], c[2], c[3], c[4]


def rgbww_to_rgb(
    red: int, green: int, blue: int, cold: int, warm: int, min_kelvin: int, max_kelvin: int
) -> RGB:
    """The rgb an rgbww colour shows, given the kelvin of its cold and warm white channels."""
    max_mireds = kelvin_to_mired(min_kelvin)
    min_mireds = kelvin_to_mired(max_kelvin)
    ratio = warm / (cold + warm) if cold + warm else 0.5
    mired = min_mireds + ratio * (max_mireds - min_mireds)
    w_r, w_g, w_b = kelvin_to_rgb(mired_to_kelvin(mired) if mired else 0)
    level = max(cold, warm) / 255
    rgb = _match_max_scale(
        (red, green, blue, cold, warm),
        (red + w_r * level, green + w_g * level, blue + w_b * level),
    )
    return rgb[0], rgb[1], rgb[2]


def kelvin_to_hs(kelvin: float) -> tuple[float, float]:
    """Hue and saturation of a colour temperature (HA's color_temperature_to_hs)."""
    return rgb_to_hs(*kelvin_to_rgb(kelvin))


def kelvin_to_rgb(kelvin: float) -> tuple[float, float, float]:
    """T. Helland's approximate rgb of a colour temperature, 1000-40000 K."""
    temperature = min(max(kelvin, 1000), 40000) / 100.0
    if temperature <= 66:
        red: float = 255
        green = _clamp(99.4708025861 * math.log(temperature) - 161.1195681661)
    else:
        red = _clamp(329.698727446 * math.pow(temperature - 60, -0.1332047592))
        green = _clamp(288.1221695283 * math.pow(temperature - 60, -0.0755148492))
    if temperature >= 66:
        blue: float = 255
    elif temperature <= 19:
        blue = 0
    else:
        blue = _clamp(138.5177312231 * math.log(temperature - 10) - 305.0447927307)
    return red, green, blue


def _clamp(channel: float) -> float:
    """Keep an rgb channel within 0-255."""
    return min(max(channel, 0), 255)


def kelvin_to_rgbww(kelvin: int, brightness: int, min_kelvin: int, max_kelvin: int) -> RGBWW:
    """The cold and warm white levels that show a colour temperature at a brightness."""
    max_mireds = kelvin_to_mired(min_kelvin)
    min_mireds = kelvin_to_mired(max_kelvin)
    mired = kelvin_to_mired(kelvin)
    cold = ((max_mireds - mired) / (max_mireds - min_mireds)) * brightness
    return 0, 0, 0, round(cold), round(brightness - cold)


def xy_to_kelvin(x: float, y: float) -> int:
    """McCamy's approximate colour temperature of an xy colour; good for 2000-10000 K."""
    n = (x - 0.3320) / (0.1858 - y)
    return int(437 * (n**3) + 3601 * (n**2) + 6861 * n + 5517)


def mired_to_kelvin(mired: float) -> int:
    """Kelvin of a mired value."""
    return math.floor(1000000 / mired)


def kelvin_to_mired(kelvin: float) -> int:
    """Mireds of a kelvin value."""
    return math.floor(1000000 / kelvin)
