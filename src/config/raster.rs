//! Terrain from a georeferenced raster (`world.terrain: {kind: ascii_grid}`, `{kind: geotiff}`
//! or `{kind: netcdf}`): an ESRI ASCII grid, a GeoTIFF (through the `tiff` crate, its GeoKeys
//! read here) or a CF NetCDF grid as GEBCO distributes it (through `netcdf-reader`, classic or
//! NetCDF-4) whose cells are in geographic coordinates or a projected CRS ([`Crs`]), resampled onto the
//! scenario's grid around `world.origin`. Each sample of the scenario's grid is placed on the
//! WGS84 ellipsoid through the local frame ([`super::geo`]), projected into the file's CRS with
//! `proj4rs` (a port of PROJ) and read from the raster bilinearly between the four cell
//! centres around it. An area that falls outside the file, a NODATA cell under it, a header
//! that does not describe the values, or a CRS that cannot be handled is an error naming what
//! was found.

use super::geo::LocalFrame;
use super::GeoOrigin;
use nalgebra::Point3;
use std::path::Path;

/// Largest raster file read, bytes.
pub const MAX_RASTER_BYTES: u64 = 512 << 20;

/// A coordinate reference system a raster's cells are in.
#[derive(Debug, Clone, PartialEq)]
pub struct Crs {
    /// As written (`EPSG:32619`, `+proj=…`).
    pub name: String,
    /// Its PROJ string.
    pub proj: String,
    /// Geographic (degrees) rather than projected (metres).
    pub geographic: bool,
}

impl Crs {
    /// `EPSG:4326` (WGS84 latitude and longitude), `EPSG:326NN` and `EPSG:327NN` (UTM zone NN
    /// north and south on WGS84), `EPSG:3857` (web Mercator), or a PROJ string (`+proj=…`).
    pub fn parse(text: &str) -> Result<Crs, String> {
        let t = text.trim();
        let named = |proj: String, geographic: bool| Crs {
            name: t.to_owned(),
            proj,
            geographic,
        };
        if t.starts_with("+proj=") {
            let geographic = t.contains("+proj=longlat") || t.contains("+proj=latlong");
            proj4rs::Proj::from_proj_string(t)
                .map_err(|e| format!("PROJ string {t:?} is not one proj4rs takes: {e}"))?;
            return Ok(named(t.to_owned(), geographic));
        }
        let code = t
            .strip_prefix("EPSG:")
            .or_else(|| t.strip_prefix("epsg:"))
            .and_then(|c| c.parse::<u32>().ok())
            .ok_or_else(|| {
                format!(
                    "{t:?} is not a CRS this reads: EPSG:4326, EPSG:326NN or EPSG:327NN (UTM), \
                     EPSG:3857, or a PROJ string starting +proj="
                )
            })?;
        match code {
            4326 => Ok(named("+proj=longlat +datum=WGS84 +no_defs".into(), true)),
            3857 => Ok(named(
                "+proj=merc +a=6378137 +b=6378137 +lat_ts=0 +lon_0=0 +x_0=0 +y_0=0 +k=1 +units=m +no_defs".into(),
                false,
            )),
            32601..=32660 => Ok(named(
                format!("+proj=utm +zone={} +datum=WGS84 +units=m +no_defs", code - 32600),
                false,
            )),
            32701..=32760 => Ok(named(
                format!(
                    "+proj=utm +zone={} +south +datum=WGS84 +units=m +no_defs",
                    code - 32700
                ),
                false,
            )),
            _ => Err(format!(
                "EPSG:{code} is not a CRS this reads: EPSG:4326, EPSG:326NN or EPSG:327NN (UTM), \
                 EPSG:3857, or give its PROJ string (+proj=…)"
            )),
        }
    }
}

/// A raster's cells: `rows` rows of `cols` values, row 0 the northern one, the centre of cell
/// (0, 0) at (`x0`, `y0`) in its CRS, `dx` and `dy` apart.
#[derive(Debug, Clone, PartialEq)]
pub struct Raster {
    pub cols: usize,
    pub rows: usize,
    pub x0: f64,
    pub y0: f64,
    pub dx: f64,
    pub dy: f64,
    pub values: Vec<f64>,
    pub nodata: Option<f64>,
}

impl Raster {
    /// The value at (`x`, `y`) in the raster's CRS, bilinear between the four cell centres
    /// around it: `Ok(None)` outside the centres' extent, an error naming the cell for a NODATA
    /// one among the four.
    pub fn sample(&self, x: f64, y: f64) -> Result<Option<f64>, String> {
        let fx = (x - self.x0) / self.dx;
        let fy = (self.y0 - y) / self.dy;
        let (maxc, maxr) = ((self.cols - 1) as f64, (self.rows - 1) as f64);
        if !(fx >= -1e-9 && fx <= maxc + 1e-9 && fy >= -1e-9 && fy <= maxr + 1e-9) {
            return Ok(None);
        }
        let (fx, fy) = (fx.clamp(0.0, maxc), fy.clamp(0.0, maxr));
        let c = (fx.floor() as usize).min(self.cols.saturating_sub(2));
        let r = (fy.floor() as usize).min(self.rows.saturating_sub(2));
        let (u, v) = (fx - c as f64, fy - r as f64);
        let mut h = [[0.0; 2]; 2];
        for (i, row) in h.iter_mut().enumerate() {
            for (j, cell) in row.iter_mut().enumerate() {
                let (rr, cc) = ((r + i).min(self.rows - 1), (c + j).min(self.cols - 1));
                let value = self.values[rr * self.cols + cc];
                if self
                    .nodata
                    .is_some_and(|n| n == value || (n.is_nan() && value.is_nan()))
                {
                    return Err(format!(
                        "the area reaches a NODATA cell (row {}, column {} of the file)",
                        rr + 1,
                        cc + 1
                    ));
                }
                *cell = value;
            }
        }
        let top = h[0][0] + u * (h[0][1] - h[0][0]);
        let bottom = h[1][0] + u * (h[1][1] - h[1][0]);
        Ok(Some(top + v * (bottom - top)))
    }

    /// The extent of the cell centres, `[west, south, east, north]`, in the CRS's units.
    pub fn extent(&self) -> [f64; 4] {
        let east = self.x0 + (self.cols - 1) as f64 * self.dx;
        let south = self.y0 - (self.rows - 1) as f64 * self.dy;
        [self.x0, south, east, self.y0]
    }
}

/// Reads the ESRI ASCII grid at `path`, at most `max_dim` cells a side; an error says why.
pub fn read_ascii_grid(path: &Path, max_dim: usize) -> Result<Raster, String> {
    let bytes = super::files::read_bounded(path, MAX_RASTER_BYTES)?;
    parse_ascii_grid(&String::from_utf8_lossy(&bytes), max_dim)
}

/// An ESRI ASCII grid's `text`: its header (`ncols`, `nrows`, `xllcorner` or `xllcenter`,
/// `yllcorner` or `yllcenter`, `cellsize`, optionally `NODATA_value`, in any order, without
/// case), then `nrows × ncols` values (each side at most `max_dim`), the northern row first,
/// separated by any white space. Errors name the line.
pub fn parse_ascii_grid(text: &str, max_dim: usize) -> Result<Raster, String> {
    let at = |line: usize, message: String| format!("line {line}: {message}");
    let mut header = std::collections::HashMap::new();
    let mut values: Vec<f64> = Vec::new();
    let mut expected = None;
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let mut words = line.split_whitespace().peekable();
        let Some(first) = words.peek().copied() else {
            continue;
        };
        if values.is_empty() && first.starts_with(|c: char| c.is_ascii_alphabetic()) {
            let key = first.to_ascii_lowercase();
            if !HEADER_KEYS.contains(&key.as_str()) {
                return Err(at(
                    n,
                    format!("{first:?} is not a key of an ESRI ASCII grid's header"),
                ));
            }
            let value = line.split_whitespace().nth(1).unwrap_or("");
            let v: f64 = value
                .parse()
                .ok()
                .filter(|v: &f64| v.is_finite())
                .ok_or_else(|| at(n, format!("{first}: not a finite number: {value:?}")))?;
            if header.insert(key, (v, n)).is_some() {
                return Err(at(n, format!("{first} is given twice")));
            }
            continue;
        }
        let (cols, rows) = match expected {
            Some(t) => t,
            None => *expected.insert(dims(&header, max_dim)?),
        };
        for w in words {
            if values.len() >= cols * rows {
                return Err(at(
                    n,
                    format!("more values than ncols × nrows ({cols} × {rows})"),
                ));
            }
            let v: f64 = w
                .parse()
                .ok()
                .filter(|v: &f64| v.is_finite())
                .ok_or_else(|| at(n, format!("not a finite number: {w:?}")))?;
            values.push(v);
        }
    }
    let (cols, rows) = match expected {
        Some(t) => t,
        None => dims(&header, max_dim)?,
    };
    if values.len() != cols * rows {
        return Err(format!(
            "{} values for ncols × nrows = {cols} × {rows} ({})",
            values.len(),
            cols * rows
        ));
    }
    let get = |k: &str| header.get(k).map(|(v, _)| *v);
    let cell = get("cellsize")
        .filter(|c| *c > 0.0)
        .ok_or_else(|| "the header needs cellsize > 0".to_owned())?;
    let (x0, y_south) = match (
        get("xllcorner"),
        get("xllcenter"),
        get("yllcorner"),
        get("yllcenter"),
    ) {
        (Some(x), None, Some(y), None) => (x + cell / 2.0, y + cell / 2.0),
        (None, Some(x), None, Some(y)) => (x, y),
        _ => {
            return Err(
                "the header needs xllcorner and yllcorner, or xllcenter and yllcenter".into(),
            )
        }
    };
    Ok(Raster {
        cols,
        rows,
        x0,
        y0: y_south + (rows - 1) as f64 * cell,
        dx: cell,
        dy: cell,
        values,
        nodata: get("nodata_value"),
    })
}

/// The keys of an ESRI ASCII grid's header, without case.
const HEADER_KEYS: [&str; 8] = [
    "ncols",
    "nrows",
    "xllcorner",
    "xllcenter",
    "yllcorner",
    "yllcenter",
    "cellsize",
    "nodata_value",
];

/// `ncols` and `nrows` from the header: whole, at least 2, at most `max_dim`.
fn dims(
    header: &std::collections::HashMap<String, (f64, usize)>,
    max_dim: usize,
) -> Result<(usize, usize), String> {
    let whole = |k: &str| -> Result<usize, String> {
        let (v, line) = *header
            .get(k)
            .ok_or_else(|| format!("the header has no {k}"))?;
        if v.fract() != 0.0 || !(2.0..=max_dim as f64).contains(&v) {
            return Err(format!(
                "line {line}: {k} must be a whole number from 2 to {max_dim} (got {v})"
            ));
        }
        Ok(v as usize)
    };
    Ok((whole("ncols")?, whole("nrows")?))
}

/// A GeoTIFF's first image (one band, integer or float samples) and the CRS its GeoKeys name
/// (`EPSG:N` from `ProjectedCSTypeGeoKey` or `GeographicTypeGeoKey`; none if it names none), at
/// most `max_dim` cells a side: the cells placed by `ModelPixelScaleTag` and the first
/// `ModelTiepointTag` (north up; a `ModelTransformationTag`, rotated or sheared, is refused),
/// `PixelIsArea` or `PixelIsPoint`, and GDAL's `GDAL_NODATA`. An error says why.
pub fn read_geotiff(bytes: &[u8], max_dim: usize) -> Result<(Raster, Option<String>), String> {
    // The tiff crate panics on some malformed files (an empty SampleFormat, for one): a panic
    // in it is this file's error, not the run's.
    let d = std::panic::catch_unwind(|| decode_tiff(bytes, max_dim)).map_err(|_| {
        "not a GeoTIFF that can be read: the TIFF decoder failed on it".to_owned()
    })??;
    let (cols, rows, keys) = (d.cols, d.rows, d.keys);
    let (sx, sy) = (d.scale[0], d.scale[1]);
    if !(sx > 0.0 && sy > 0.0) {
        return Err(format!("its pixel scale ({sx}, {sy}) is not positive"));
    }
    let tie = d.tie;
    let key = |id: u64| -> Option<u64> {
        keys.get(4..)?
            .chunks_exact(4)
            .find(|k| k[0] == id && k[1] == 0)
            .map(|k| k[3])
    };
    // PixelIsPoint (2): the tiepoint is a cell's centre; PixelIsArea (default): its corner.
    let half = if key(1025) == Some(2) { 0.0 } else { 0.5 };
    let x0 = tie[3] + (half - tie[0]) * sx;
    let y0 = tie[4] - (half - tie[1]) * sy;
    let crs = match (key(3072), key(2048)) {
        (Some(p), _) if p != 32767 && p != 0 => Some(format!("EPSG:{p}")),
        (_, Some(g)) if g != 32767 && g != 0 => Some(format!("EPSG:{g}")),
        _ => None,
    };
    let nodata = match d.nodata {
        Some(text) => {
            let text = text.trim_matches(|c: char| c == '\0' || c.is_whitespace());
            Some(
                text.parse::<f64>()
                    .map_err(|_| format!("its GDAL_NODATA is not a number: {text:?}"))?,
            )
        }
        None => None,
    };
    let values = d.values;
    if values.len() != cols * rows {
        return Err(format!(
            "{} samples for {cols}×{rows} cells: a terrain's raster is one band",
            values.len()
        ));
    }
    if let Some((k, _)) = (values.iter().enumerate())
        .find(|(_, v)| !v.is_finite() && nodata.is_none_or(|n| !n.is_nan()))
    {
        return Err(format!(
            "cell (row {}, column {}) is not a finite number",
            k / cols + 1,
            k % cols + 1
        ));
    }
    let raster = Raster {
        cols,
        rows,
        x0,
        y0,
        dx: sx,
        dy: sy,
        values,
        nodata,
    };
    Ok((raster, crs))
}

/// What [`read_geotiff`] takes from the `tiff` crate: the first image's size, its
/// georeferencing tags and GDAL's NODATA as they are, and its samples.
struct Decoded {
    cols: usize,
    rows: usize,
    scale: Vec<f64>,
    tie: Vec<f64>,
    keys: Vec<u64>,
    nodata: Option<String>,
    values: Vec<f64>,
}

/// The `tiff` crate's part of [`read_geotiff`]: one band, 2 to `max_dim` a side, north up.
fn decode_tiff(bytes: &[u8], max_dim: usize) -> Result<Decoded, String> {
    use tiff::decoder::{Decoder, DecodingResult};
    use tiff::tags::Tag;
    let tiff_err = |e: tiff::TiffError| format!("not a GeoTIFF that can be read: {e}");
    let mut d = Decoder::new(std::io::Cursor::new(bytes)).map_err(tiff_err)?;
    let (w, h) = d.dimensions().map_err(tiff_err)?;
    let (cols, rows) = (w as usize, h as usize);
    if !(2..=max_dim).contains(&cols) || !(2..=max_dim).contains(&rows) {
        return Err(format!(
            "{cols}×{rows} cells: a terrain's raster has 2 to {max_dim} a side"
        ));
    }
    match d.colortype().map_err(tiff_err)? {
        tiff::ColorType::Gray(_) => {}
        other => return Err(format!("{other:?}: a terrain's raster is one band")),
    }
    if d.find_tag(Tag::Unknown(34264)).map_err(tiff_err)?.is_some() {
        return Err(
            "its cells are placed by a ModelTransformationTag (rotated or sheared): only \
             north-up rasters are read (gdalwarp makes one)"
                .into(),
        );
    }
    let mut f64s = |tag: u16, name: &str, n: usize| -> Result<Vec<f64>, String> {
        let v = d
            .find_tag(Tag::Unknown(tag))
            .map_err(tiff_err)?
            .ok_or_else(|| format!("no {name}: not georeferenced"))?
            .into_f64_vec()
            .map_err(tiff_err)?;
        if v.len() < n || v.iter().take(n).any(|x| !x.is_finite()) {
            return Err(format!("its {name} is not {n} finite numbers"));
        }
        Ok(v)
    };
    let scale = f64s(33550, "ModelPixelScaleTag", 2)?;
    let tie = f64s(33922, "ModelTiepointTag", 6)?;
    let keys: Vec<u64> = match d.find_tag(Tag::Unknown(34735)).map_err(tiff_err)? {
        Some(v) => v.into_u64_vec().map_err(tiff_err)?,
        None => Vec::new(),
    };
    let nodata = match d.find_tag(Tag::Unknown(42113)).map_err(tiff_err)? {
        Some(v) => Some(v.into_string().map_err(tiff_err)?),
        None => None,
    };
    let values: Vec<f64> = match d.read_image().map_err(tiff_err)? {
        DecodingResult::U8(v) => v.into_iter().map(f64::from).collect(),
        DecodingResult::I8(v) => v.into_iter().map(f64::from).collect(),
        DecodingResult::U16(v) => v.into_iter().map(f64::from).collect(),
        DecodingResult::I16(v) => v.into_iter().map(f64::from).collect(),
        DecodingResult::U32(v) => v.into_iter().map(f64::from).collect(),
        DecodingResult::I32(v) => v.into_iter().map(f64::from).collect(),
        DecodingResult::F32(v) => v.into_iter().map(f64::from).collect(),
        DecodingResult::F64(v) => v,
        _ => return Err("its samples are not 8 to 32-bit integers or 32/64-bit floats".into()),
    };
    Ok(Decoded {
        cols,
        rows,
        scale,
        tie,
        keys,
        nodata,
        values,
    })
}

/// The heights (z up, row-major, row 0 north) of the scenario's grid of `cols × rows` samples
/// `cell` metres apart centred on `origin`, from `raster` in `crs`; `depths`: the raster holds
/// depths (metres down), not heights.
pub fn resample(
    raster: &Raster,
    crs: &Crs,
    origin: &GeoOrigin,
    (cols, rows): (usize, usize),
    cell: f64,
    depths: bool,
) -> Result<Vec<f64>, String> {
    let half = [
        cols.saturating_sub(1) as f64 * cell / 2.0,
        rows.saturating_sub(1) as f64 * cell / 2.0,
    ];
    let frame = LocalFrame::new(origin);
    let from = proj4rs::Proj::from_proj_string("+proj=longlat +datum=WGS84 +no_defs")
        .map_err(|e| format!("WGS84: {e}"))?;
    let to =
        proj4rs::Proj::from_proj_string(&crs.proj).map_err(|e| format!("{}: {e}", crs.name))?;
    let mut heights = Vec::with_capacity(cols * rows);
    for r in 0..rows {
        for c in 0..cols {
            let (x, y) = (-half[0] + c as f64 * cell, half[1] - r as f64 * cell);
            let (lat, lon, _) = frame.to_lat_lon_depth(&Point3::new(x, y, 0.0));
            let mut p = (lon.to_radians(), lat.to_radians(), 0.0);
            proj4rs::transform::transform(&from, &to, &mut p)
                .map_err(|e| format!("({x}, {y}) into {}: {e}", crs.name))?;
            let (px, py) = if to.is_latlong() {
                (p.0.to_degrees(), p.1.to_degrees())
            } else {
                (p.0, p.1)
            };
            let v = raster
                .sample(px, py)
                .map_err(|e| format!("({x}, {y}): {e}"))?
                .ok_or_else(|| {
                    let [w, s, e, n] = raster.extent();
                    format!(
                        "the scenario's area reaches ({x}, {y}) m from the origin, at \
                         ({px:.6}, {py:.6}) in {}, outside the file's cells \
                         ({w:.6}..{e:.6}, {s:.6}..{n:.6}): make size_m smaller or move \
                         world.origin",
                        crs.name
                    )
                })?;
            heights.push(if depths { -v } else { v });
        }
    }
    Ok(heights)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_grid_s_header_and_values_are_read_and_sampled_between_cell_centres() {
        let r = parse_ascii_grid(
            "ncols 3\nNROWS 2\nxllcorner 100\nyllcorner 200\ncellsize 10\nNODATA_value -9999\n1 2 3\n4 5\n-9999\n",
            64,
        )
        .unwrap();
        assert_eq!((r.cols, r.rows, r.x0, r.y0), (3, 2, 105.0, 215.0));
        assert_eq!(r.extent(), [105.0, 205.0, 125.0, 215.0]);
        assert_eq!(r.sample(110.0, 210.0), Ok(Some(3.0)));
        assert_eq!(r.sample(104.0, 210.0), Ok(None));
        assert!(r
            .sample(120.0, 207.0)
            .unwrap_err()
            .contains("row 2, column 3"));
    }

    #[test]
    fn netcdf_grids_are_read_north_up_in_either_axis_order() {
        // GEBCO's shape (written by the netCDF4 library): lat south to north, int16 elevation
        // packed at 0.001 m, the south-west cell its fill value.
        let bytes = include_bytes!("../../fuzz/corpus/netcdf/gebco_like.nc");
        let (r, crs) = read_netcdf(bytes, None, 64).unwrap();
        assert_eq!(crs.as_deref(), Some("EPSG:4326"));
        assert_eq!((r.cols, r.rows), (4, 3));
        assert!((r.x0 + 70.6).abs() < 1e-12 && (r.y0 - 41.502).abs() < 1e-12);
        // Written north first: -20, -19.5, … ; the first row read is the northern one.
        assert!((r.values[0] + 20.0).abs() < 1e-9, "{:?}", r.values);
        assert!(r.values[8].is_nan(), "{:?}", r.values);
        assert!(r.sample(-70.6, 41.5).unwrap_err().contains("NODATA"));
        // Classic format, x/y axes, y north to south: no CRS of its own.
        let bytes = include_bytes!("../../fuzz/corpus/netcdf/classic.nc");
        let (r, crs) = read_netcdf(bytes, Some("depth"), 64).unwrap();
        assert_eq!(crs, None);
        assert_eq!((r.x0, r.y0, r.dx, r.dy), (10.0, 300.0, 10.0, 100.0));
        assert_eq!(r.values[..4], [0.0, 1.0, 2.0, 3.0]);
        let e = read_netcdf(bytes, Some("x"), 64).unwrap_err();
        assert!(e.contains("variable x is over (x), not (y, x)"), "{e}");
        let e = read_netcdf(b"CDF\x01 nonsense", None, 64).unwrap_err();
        assert!(e.starts_with("not a NetCDF file that can be read"), "{e}");
    }

    #[test]
    fn a_tiff_the_tiff_crate_panics_on_is_an_error() {
        // Found by the `geotiff` fuzz target: an empty SampleFormat tag.
        let bytes = include_bytes!("../../fuzz/corpus/geotiff/tiff_decoder_panics.tif");
        let e = read_geotiff(bytes, 64).unwrap_err();
        assert!(e.starts_with("not a GeoTIFF that can be read"), "{e}");
    }

    #[test]
    fn bad_grids_and_crs_are_refused_naming_what_was_found() {
        let cases = [
            (
                "ncols 2\nnrows 2\nxllcorner 0\nyllcorner 0\ncellsize 1\n1 2 3\n",
                "3 values for ncols × nrows = 2 × 2 (4)",
            ),
            (
                "ncols 2\nnrows 2\nxllcorner 0\nyllcorner 0\ncellsize 1\n1 2 3 4 5\n",
                "line 6: more values",
            ),
            (
                "ncols 2.5\nnrows 2\nxllcorner 0\nyllcorner 0\ncellsize 1\n1 2 3 4 5\n",
                "line 1: ncols must be a whole number",
            ),
            (
                "ncols 2\nnrows 2\nxllcorner 0\nyllcenter 0\ncellsize 1\n1 2 3 4\n",
                "xllcorner and yllcorner, or xllcenter and yllcenter",
            ),
            (
                "ncols 2\nnrows 2\nxllcorner 0\nyllcorner 0\ncellsize 1\n1 x 3 4\n",
                "line 6: not a finite number: \"x\"",
            ),
            ("ncols 2\nrows 2\n", "line 2: \"rows\" is not a key"),
            (
                "ncols 2\nnrows 2\nxllcorner 0\nyllcorner 0\n1 2 3 4\n",
                "cellsize > 0",
            ),
        ];
        for (text, says) in cases {
            let e = parse_ascii_grid(text, 64).unwrap_err();
            assert!(e.contains(says), "{text:?}: {e}");
        }
        assert!(Crs::parse("EPSG:32619").unwrap().proj.contains("+zone=19"));
        assert!(Crs::parse("EPSG:32719").unwrap().proj.contains("+south"));
        assert!(Crs::parse("EPSG:4326").unwrap().geographic);
        assert!(Crs::parse("EPSG:2154")
            .unwrap_err()
            .contains("give its PROJ string"));
        assert!(Crs::parse("UTM19")
            .unwrap_err()
            .contains("is not a CRS this reads"));
    }
}

/// Names a CF grid's axes go by (compared without case).
const NETCDF_X: &[&str] = &["lon", "longitude", "x", "easting"];
const NETCDF_Y: &[&str] = &["lat", "latitude", "y", "northing"];

/// A CF NetCDF grid (classic or NetCDF-4, as GEBCO distributes its tiles): the 2-D variable
/// `variable` (absent: the one over a y and an x axis, e.g. GEBCO's `elevation(lat, lon)`),
/// its fill values masked (NODATA) and its `scale_factor`/`add_offset` applied, placed by its
/// axes' coordinate variables (cell centres, evenly spaced, either order), at most `max_dim`
/// cells a side. The CRS is `EPSG:4326` when the axes are latitude and longitude (by name or
/// by `units` of `degrees_north`/`degrees_east`), none otherwise. An error says why.
pub fn read_netcdf(
    bytes: &[u8],
    variable: Option<&str>,
    max_dim: usize,
) -> Result<(Raster, Option<String>), String> {
    // A panic in the decoder on a malformed file is this file's error, not the run's.
    std::panic::catch_unwind(|| decode_netcdf(bytes, variable, max_dim)).map_err(|_| {
        "not a NetCDF file that can be read: the NetCDF decoder failed on it".to_owned()
    })?
}

fn decode_netcdf(
    bytes: &[u8],
    variable: Option<&str>,
    max_dim: usize,
) -> Result<(Raster, Option<String>), String> {
    use netcdf_reader::{NcFile, NcVariable};
    let nc = NcFile::from_bytes(bytes)
        .map_err(|e| format!("not a NetCDF file that can be read: {e}"))?;
    let variables = nc
        .variables()
        .map_err(|e| format!("its variables cannot be read: {e}"))?;
    let is = |name: &str, names: &[&str]| names.contains(&name.to_ascii_lowercase().as_str());
    let grid_of = |v: &NcVariable| {
        let d = &v.dimensions;
        d.len() == 2 && is(&d[0].name, NETCDF_Y) && is(&d[1].name, NETCDF_X)
    };
    let var =
        match variable {
            Some(name) => variables.iter().find(|v| v.name == name).ok_or_else(|| {
                format!(
                    "it has no variable {name:?} (it has {})",
                    listed(variables.iter().map(|v| v.name.as_str()))
                )
            })?,
            None => {
                variables.iter().find(|v| grid_of(v)).ok_or_else(|| {
                    format!(
                "no variable over a y and an x axis (lat, lon or y, x): it has {}; name one \
                 with `variable`",
                listed(variables.iter().map(|v| format!("{}{:?}", v.name, v.shape())))
            )
                })?
            }
        };
    if !grid_of(var) {
        return Err(format!(
            "variable {} is over ({}), not (y, x): a grid's dimensions are lat, lon or y, x, in \
             that order",
            var.name,
            listed(var.dimensions.iter().map(|d| d.name.as_str()))
        ));
    }
    let (ydim, xdim) = (&var.dimensions[0], &var.dimensions[1]);
    let (rows, cols) = (ydim.size, xdim.size);
    if rows < 2 || cols < 2 || rows > max_dim as u64 || cols > max_dim as u64 {
        return Err(format!(
            "variable {} is {cols} × {rows} cells: a grid has 2 to {max_dim} a side",
            var.name
        ));
    }
    let (rows, cols) = (rows as usize, cols as usize);
    let axis = |dim: &str, n: usize| -> Result<(f64, f64), String> {
        let v: Vec<f64> = nc
            .read_variable_as_f64(dim)
            .map_err(|e| format!("axis {dim}: its coordinate variable cannot be read ({e})"))?
            .iter()
            .copied()
            .collect();
        if v.len() != n || v.iter().any(|x| !x.is_finite()) {
            return Err(format!(
                "axis {dim}: {} coordinates for {n} cells, or one not finite",
                v.len()
            ));
        }
        let step = (v[n - 1] - v[0]) / (n - 1) as f64;
        if step == 0.0 {
            return Err(format!("axis {dim} does not change"));
        }
        if let Some(i) = (1..n).find(|&i| ((v[i] - v[i - 1]) - step).abs() > 1e-3 * step.abs()) {
            return Err(format!(
                "axis {dim} is not evenly spaced: {} then {} at index {i}, {step} on average",
                v[i - 1],
                v[i]
            ));
        }
        Ok((v[0], step))
    };
    let (x_first, x_step) = axis(&xdim.name, cols)?;
    let (y_first, y_step) = axis(&ydim.name, rows)?;
    let data: Vec<f64> = nc
        .read_variable_unpacked_masked(&var.name)
        .map_err(|e| format!("variable {}: {e}", var.name))?
        .iter()
        .copied()
        .collect();
    if data.len() != rows * cols {
        return Err(format!(
            "variable {} holds {} values for {cols} × {rows} cells",
            var.name,
            data.len()
        ));
    }
    // Row 0 the northern one, column 0 the western one, whichever way the axes run.
    let mut values = vec![f64::NAN; rows * cols];
    for r in 0..rows {
        let from_r = if y_step > 0.0 { rows - 1 - r } else { r };
        for c in 0..cols {
            let from_c = if x_step > 0.0 { c } else { cols - 1 - c };
            values[r * cols + c] = data[from_r * cols + from_c];
        }
    }
    let last = |first: f64, step: f64, n: usize| first + step * (n - 1) as f64;
    let x0 = if x_step > 0.0 {
        x_first
    } else {
        last(x_first, x_step, cols)
    };
    let y0 = if y_step > 0.0 {
        last(y_first, y_step, rows)
    } else {
        y_first
    };
    let units = |dim: &str| {
        variables
            .iter()
            .find(|v| v.name == dim)
            .and_then(|v| v.attribute("units"))
            .and_then(|a| a.value.as_string())
            .unwrap_or_default()
            .to_ascii_lowercase()
    };
    let geographic = (is(&xdim.name, &["lon", "longitude"])
        || units(&xdim.name).starts_with("degrees_e"))
        && (is(&ydim.name, &["lat", "latitude"]) || units(&ydim.name).starts_with("degrees_n"));
    let raster = Raster {
        cols,
        rows,
        x0,
        y0,
        dx: x_step.abs(),
        dy: y_step.abs(),
        values,
        nodata: Some(f64::NAN),
    };
    Ok((raster, geographic.then(|| "EPSG:4326".to_owned())))
}

/// `items` joined by commas, at most 12 of them.
fn listed<T: std::fmt::Display>(items: impl Iterator<Item = T>) -> String {
    let v: Vec<String> = items.take(13).map(|i| i.to_string()).collect();
    if v.len() > 12 {
        format!("{}, …", v[..12].join(", "))
    } else {
        v.join(", ")
    }
}
