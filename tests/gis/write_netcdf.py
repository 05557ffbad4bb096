"""Writes a CF NetCDF-4 grid as GEBCO distributes its tiles, with the netCDF4 library: `lat`
(south to north) and `lon` axes of cell centres in degrees, and `elevation(lat, lon)` packed as
16-bit integers with a scale_factor (0.001 m) and a _FillValue (the south-west cell holds it).
The values are ROWS x COLS little-endian float32 read from VALUES, the northern row first;
(WEST, SOUTH) is the south-west cell's centre, cells STEP degrees apart.

    write_netcdf.py VALUES COLS ROWS WEST SOUTH STEP OUT.nc
"""
import sys

import netCDF4
import numpy as np


def main(values, cols, rows, west, south, step, out):
    cols, rows = int(cols), int(rows)
    west, south, step = float(west), float(south), float(step)
    data = np.fromfile(values, dtype="<f4").reshape(rows, cols)[::-1, :]
    with netCDF4.Dataset(out, "w", format="NETCDF4") as nc:
        nc.Conventions = "CF-1.6"
        nc.title = "a test grid shaped as a GEBCO tile"
        nc.createDimension("lat", rows)
        nc.createDimension("lon", cols)
        lat = nc.createVariable("lat", "f8", ("lat",))
        lat.units = "degrees_north"
        lat.standard_name = "latitude"
        lat[:] = south + step * np.arange(rows)
        lon = nc.createVariable("lon", "f8", ("lon",))
        lon.units = "degrees_east"
        lon.standard_name = "longitude"
        lon[:] = west + step * np.arange(cols)
        elevation = nc.createVariable("elevation", "i2", ("lat", "lon"), fill_value=-32768,
                                      zlib=True)
        elevation.units = "m"
        elevation.standard_name = "height_above_reference_ellipsoid"
        elevation.scale_factor = 0.001
        elevation.add_offset = 0.0
        masked = np.ma.masked_array(data.astype("f8"), mask=np.zeros(data.shape, bool))
        masked.mask[0, 0] = True
        elevation[:, :] = masked


if __name__ == "__main__":
    if len(sys.argv) != 8:
        sys.exit(__doc__)
    main(*sys.argv[1:])
