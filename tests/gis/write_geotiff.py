"""Writes a GeoTIFF with tifffile (the GeoTIFF tags GDAL writes: ModelPixelScale, ModelTiepoint,
GeoKeyDirectory, GDAL_NODATA): one float32 band of ROWS x COLS little-endian values read from
VALUES, its top-left cell corner at (WEST, NORTH) in the CRS EPSG:CODE, cells SIZE apart.

    write_geotiff.py VALUES COLS ROWS WEST NORTH SIZE CODE OUT.tif
"""
import sys

import numpy as np
import tifffile


def main(values, cols, rows, west, north, size, code, out):
    cols, rows, code = int(cols), int(rows), int(code)
    west, north, size = float(west), float(north), float(size)
    data = np.fromfile(values, dtype="<f4").reshape(rows, cols)
    geographic = code == 4326
    # GeoKeyDirectory: version 1.1.0, then (key, location 0 = value here, count 1, value).
    keys = [1, 1, 0, 3,
            1024, 0, 1, 2 if geographic else 1,   # GTModelTypeGeoKey
            1025, 0, 1, 1,                         # GTRasterTypeGeoKey: PixelIsArea
            2048 if geographic else 3072, 0, 1, code]
    tifffile.imwrite(
        out,
        data,
        extratags=[
            (33550, "d", 3, (size, size, 0.0)),
            (33922, "d", 6, (0.0, 0.0, 0.0, west, north, 0.0)),
            (34735, "H", len(keys), keys),
            (42113, "s", 0, "-9999"),
        ],
    )


if __name__ == "__main__":
    main(*sys.argv[1:])
