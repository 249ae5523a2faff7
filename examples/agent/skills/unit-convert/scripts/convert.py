#!/usr/bin/env python3
"""Convert a quantity between units of the same dimension with exact factors.

Usage:
    python3 scripts/convert.py 5 mi km
    python3 scripts/convert.py 98.6 degF degC --precision 3
    python3 scripts/convert.py --list

Standard library only. Prints one JSON object ({"ok": true, ...}); on error
{"ok": false, "error": {"code", "message"}} and exit code 1.
"""

import argparse
import json
import sys

# Factor to the base unit of each dimension (m, kg, m3, s, B).
FACTORS = {
    "length": {"mm": 0.001, "cm": 0.01, "m": 1.0, "km": 1000.0, "in": 0.0254,
               "ft": 0.3048, "yd": 0.9144, "mi": 1609.344},
    "mass": {"mg": 1e-6, "g": 0.001, "kg": 1.0, "t": 1000.0, "oz": 0.028349523125,
             "lb": 0.45359237},
    "volume": {"ml": 1e-6, "l": 0.001, "tsp": 4.92892159375e-6, "tbsp": 1.478676478125e-5,
               "cup": 2.365882365e-4, "pt": 4.73176473e-4, "gal": 3.785411784e-3},
    "time": {"s": 1.0, "min": 60.0, "h": 3600.0, "d": 86400.0, "wk": 604800.0},
    "storage": {"B": 1.0, "kB": 1e3, "MB": 1e6, "GB": 1e9, "KiB": 1024.0,
                "MiB": 1024.0 ** 2, "GiB": 1024.0 ** 3},
}
TEMPERATURE = ("degC", "degF", "K")


class CliError(Exception):
    def __init__(self, code, message):
        Exception.__init__(self, message)
        self.code = code


def dimension(unit):
    if unit in TEMPERATURE:
        return "temperature"
    for dim, units in FACTORS.items():
        if unit in units:
            return dim
    known = sorted(u for units in FACTORS.values() for u in units) + list(TEMPERATURE)
    raise CliError("UNKNOWN_UNIT", "unknown unit `{}`; known: {}".format(unit, ", ".join(known)))


def to_kelvin(value, unit):
    if unit == "degC":
        return value + 273.15
    if unit == "degF":
        return (value - 32.0) * 5.0 / 9.0 + 273.15
    return value


def from_kelvin(value, unit):
    if unit == "degC":
        return value - 273.15
    if unit == "degF":
        return (value - 273.15) * 9.0 / 5.0 + 32.0
    return value


def convert(value, src, dst, precision):
    dim_src, dim_dst = dimension(src), dimension(dst)
    if dim_src != dim_dst:
        raise CliError("INCOMPATIBLE_UNITS",
                       "`{}` is {} but `{}` is {}".format(src, dim_src, dst, dim_dst))
    if dim_src == "temperature":
        result = from_kelvin(to_kelvin(value, src), dst)
    else:
        result = value * FACTORS[dim_src][src] / FACTORS[dim_src][dst]
    result = float("{:.{}g}".format(result, precision))
    if result.is_integer():
        result = int(result)
    return {"ok": True, "value": value, "from": src, "to": dst, "result": result,
            "dimension": dim_src}


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("value", nargs="?", type=float)
    parser.add_argument("src", nargs="?", metavar="from")
    parser.add_argument("dst", nargs="?", metavar="to")
    parser.add_argument("--precision", type=int, default=6)
    parser.add_argument("--list", action="store_true")
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        if e.code == 0:  # --help
            raise
        raise CliError("BAD_ARGS", "usage: convert.py VALUE FROM TO [--precision N]")
    if args.list:
        units = dict((dim, sorted(u)) for dim, u in FACTORS.items())
        units["temperature"] = list(TEMPERATURE)
        print(json.dumps({"ok": True, "units": units}))
        return
    if args.value is None or args.src is None or args.dst is None:
        raise CliError("BAD_ARGS", "usage: convert.py VALUE FROM TO [--precision N]")
    if not 1 <= args.precision <= 12:
        raise CliError("BAD_ARGS", "--precision must be between 1 and 12")
    value = int(args.value) if args.value.is_integer() else args.value
    print(json.dumps(convert(value, args.src, args.dst, args.precision)))


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except CliError as e:
        print(json.dumps({"ok": False, "error": {"code": e.code, "message": str(e)}}))
        sys.exit(1)
