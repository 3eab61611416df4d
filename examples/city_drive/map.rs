//! The top-down map of the drive: the scene's triangles seen from above (shaded by
//! height, outlined where the height jumps), the route, the vehicle's path, the vehicle's
//! box where contacts began, and the parts of triangles the box touched.
//!
//! Image axes: world +x to the right, world +z down (north, -z, up), square pixels.

use std::path::Path;

use glam::{DVec2, DVec3};

/// Colours of the map, also printed as its legend.
pub const ROUTE: [u8; 3] = [40, 110, 255];
/// The vehicle's path.
pub const PATH: [u8; 3] = [10, 10, 40];
/// The triangles hit.
pub const HIT: [u8; 3] = [255, 0, 0];
/// The vehicle's box where a contact began.
pub const CONTACT_BOX: [u8; 3] = [255, 150, 0];

/// An RGB raster of a rectangle of the ground plane.
pub struct Map {
    width: usize,
    height: usize,
    origin: DVec2,
    pixels_per_metre: f64,
    rgb: Vec<[u8; 3]>,
    /// Height of the highest surface seen at each pixel (NaN: nothing).
    top: Vec<f64>,
}

impl Map {
    /// A map of `[min, max]` (world x, z) at most `max_side` pixels on its longer side.
    pub fn new(min: DVec2, max: DVec2, max_side: usize) -> Map {
        let size = (max - min).max(DVec2::splat(1.0));
        let pixels_per_metre = max_side as f64 / size.max_element();
        let width = ((size.x * pixels_per_metre).ceil() as usize).max(1);
        let height = ((size.y * pixels_per_metre).ceil() as usize).max(1);
        Map {
            width,
            height,
            origin: min,
            pixels_per_metre,
            rgb: vec![[255, 255, 255]; width * height],
            top: vec![f64::NAN; width * height],
        }
    }

    /// Image size in pixels.
    pub fn size(&self) -> (usize, usize) {
        (self.width, self.height)
    }

    /// Pixel coordinates (continuous) of a world point.
    fn to_pixel(&self, p: DVec3) -> DVec2 {
        (DVec2::new(p.x, p.z) - self.origin) * self.pixels_per_metre
    }

    /// Rasterises world triangles from above, keeping the highest at each pixel centre,
    /// and shades them by height with outlines where neighbouring heights differ.
    pub fn draw_terrain(&mut self, triangles: &[[DVec3; 3]]) {
        for t in triangles {
            let [a, b, c] = t.map(|p| self.to_pixel(p));
            let area = (b - a).perp_dot(c - a);
            if area == 0.0 || !area.is_finite() {
                continue; // walls: seen edge-on from above
            }
            let lo = a.min(b).min(c).floor().max(DVec2::ZERO);
            let hi = a.max(b).max(c).ceil();
            let (x1, y1) = (
                (hi.x as usize).min(self.width),
                (hi.y as usize).min(self.height),
            );
            for y in lo.y as usize..y1 {
                for x in lo.x as usize..x1 {
                    let p = DVec2::new(x as f64 + 0.5, y as f64 + 0.5);
                    let w0 = (c - b).perp_dot(p - b) / area;
                    let w1 = (a - c).perp_dot(p - c) / area;
                    let w2 = 1.0 - w0 - w1;
                    if w0 < 0.0 || w1 < 0.0 || w2 < 0.0 {
                        continue;
                    }
                    let h = w0 * t[0].y + w1 * t[1].y + w2 * t[2].y;
                    let i = y * self.width + x;
                    if self.top[i].is_nan() || h > self.top[i] {
                        self.top[i] = h;
                    }
                }
            }
        }
        self.shade();
    }

    fn shade(&mut self) {
        let (lo, hi) = self
            .top
            .iter()
            .filter(|h| h.is_finite())
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| {
                (l.min(*v), h.max(*v))
            });
        let span = (hi - lo).max(1e-9);
        for y in 0..self.height {
            for x in 0..self.width {
                let i = y * self.width + x;
                let h = self.top[i];
                if h.is_nan() {
                    continue;
                }
                let mut colour = height_colour((h - lo) / span);
                // Outline: a step of more than 0.5 m to the right or below.
                let step = |j: usize| (self.top[j] - h).abs() > 0.5 || self.top[j].is_nan();
                if (x + 1 < self.width && step(i + 1))
                    || (y + 1 < self.height && step(i + self.width))
                {
                    colour = colour.map(|c| (f64::from(c) * 0.45) as u8);
                }
                self.rgb[i] = colour;
            }
        }
    }

    /// A polyline of world points, `width` pixels wide.
    pub fn polyline(&mut self, points: &[DVec3], colour: [u8; 3], width: f64) {
        for w in points.windows(2) {
            let (a, b) = (self.to_pixel(w[0]), self.to_pixel(w[1]));
            let steps = (a.distance(b) * 2.0).ceil().max(1.0) as usize;
            for s in 0..=steps {
                self.disc(a + (b - a) * (s as f64 / steps as f64), width * 0.5, colour);
            }
        }
    }

    /// A closed polygon outline of world points.
    pub fn outline(&mut self, points: &[DVec3], colour: [u8; 3], width: f64) {
        if let Some(first) = points.first() {
            let mut closed = points.to_vec();
            closed.push(*first);
            self.polyline(&closed, colour, width);
        }
    }

    /// A filled disc of `radius` pixels around a world point.
    pub fn dot(&mut self, p: DVec3, radius: f64, colour: [u8; 3]) {
        let c = self.to_pixel(p);
        self.disc(c, radius, colour);
    }

    fn disc(&mut self, c: DVec2, radius: f64, colour: [u8; 3]) {
        let r = radius.max(0.5);
        let (x0, x1) = ((c.x - r).floor() as i64, (c.x + r).ceil() as i64);
        let (y0, y1) = ((c.y - r).floor() as i64, (c.y + r).ceil() as i64);
        for y in y0.max(0)..y1.min(self.height as i64) {
            for x in x0.max(0)..x1.min(self.width as i64) {
                let p = DVec2::new(x as f64 + 0.5, y as f64 + 0.5);
                if p.distance(c) <= r {
                    self.rgb[y as usize * self.width + x as usize] = colour;
                }
            }
        }
    }

    /// Writes the map as an 8-bit RGB PNG.
    pub fn write_png(&self, path: &Path) -> Result<(), String> {
        let file = std::fs::File::create(path)
            .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        let (w, h) = (
            u32::try_from(self.width).map_err(|e| e.to_string())?,
            u32::try_from(self.height).map_err(|e| e.to_string())?,
        );
        let mut encoder = png::Encoder::new(std::io::BufWriter::new(file), w, h);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        let bytes: Vec<u8> = self.rgb.iter().flatten().copied().collect();
        encoder
            .write_header()
            .and_then(|mut writer| writer.write_image_data(&bytes))
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
    }
}

/// Low ground pale green-grey, rising through sand to dark brown.
fn height_colour(t: f64) -> [u8; 3] {
    const STOPS: [(f64, [f64; 3]); 4] = [
        (0.0, [200.0, 206.0, 190.0]),
        (0.08, [225.0, 215.0, 180.0]),
        (0.4, [200.0, 150.0, 100.0]),
        (1.0, [110.0, 60.0, 50.0]),
    ];
    let t = t.clamp(0.0, 1.0);
    for w in STOPS.windows(2) {
        let ((t0, c0), (t1, c1)) = (w[0], w[1]);
        if t <= t1 {
            let s = (t - t0) / (t1 - t0);
            return [0, 1, 2].map(|k| (c0[k] + (c1[k] - c0[k]) * s) as u8);
        }
    }
    STOPS[3].1.map(|c| c as u8)
}
