//! Sea water's sound speed: Mackenzie's equation, and the range of speeds sea water has, which
//! bounds every speed a scenario gives or a cast holds.

/// Lowest sound speed a profile may hold, m/s.
pub const MIN_PROFILE_SPEED_MPS: f64 = 1400.0;
/// Highest sound speed a profile may hold, m/s.
pub const MAX_PROFILE_SPEED_MPS: f64 = 1700.0;

/// Sound speed in sea water (m/s) from temperature (°C), salinity (ppt) and depth (m, positive
/// down), Mackenzie (1981), JASA 70(3) 807–812, nine-term equation:
///
/// c = 1448.96 + 4.591 T − 5.304·10⁻² T² + 2.374·10⁻⁴ T³ + 1.340 (S − 35) + 1.630·10⁻² D
///     + 1.675·10⁻⁷ D² − 1.025·10⁻² T (S − 35) − 7.139·10⁻¹³ T D³
///
/// Valid for 2 ≤ T ≤ 30 °C, 25 ≤ S ≤ 40 ppt, 0 ≤ D ≤ 8000 m (standard error 0.07 m/s).
pub fn sound_speed_mackenzie(temperature_c: f64, salinity_ppt: f64, depth_m: f64) -> f64 {
    let (t, s, d) = (temperature_c, salinity_ppt - 35.0, depth_m);
    1448.96 + 4.591 * t - 5.304e-2 * t * t
        + 2.374e-4 * t * t * t
        + 1.340 * s
        + 1.630e-2 * d
        + 1.675e-7 * d * d
        - 1.025e-2 * t * s
        - 7.139e-13 * t * d * d * d
}
