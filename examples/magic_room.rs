//! The magic room: elastic balls bouncing in a closed room with pillars, under
//! gravity, simulated headless with exact contact times
//! ([`scene_intersect::collide::room`]).
//!
//! Prints a summary and writes a PNG with a top view (x–y) and a side view
//! (x–z) of the trajectories, contacts marked.
//!
//! ```text
//! cargo run --release --example magic_room -- [--output FILE] [--balls N]
//!     [--steps N] [--seed N] [--dt SECONDS]
//! ```

use std::error::Error;
use std::fs::File;
use std::io::BufWriter;
use std::path::PathBuf;
use std::time::Instant;

use glam::{DVec2, DVec3};
use scene_intersect::collide::room::{ContactEvent, Obstacle, Room, Settings, Simulation};

/// Command-line options.
#[derive(Debug, Clone)]
struct Options {
    output: PathBuf,
    balls: usize,
    steps: usize,
    seed: u64,
    dt: f64,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            output: PathBuf::from("magic_room.png"),
            balls: 20,
            steps: 10_000,
            seed: 2024,
            dt: Settings::default().dt,
        }
    }
}

const USAGE: &str =
    "usage: magic_room [--output FILE] [--balls N] [--steps N] [--seed N] [--dt SECONDS]";

/// Parses `--name value` pairs; `--help` prints the usage.
fn parse_options(args: impl IntoIterator<Item = String>) -> Result<Option<Options>, String> {
    let mut options = Options::default();
    let mut args = args.into_iter();
    while let Some(flag) = args.next() {
        if flag == "--help" || flag == "-h" {
            return Ok(None);
        }
        let value = args
            .next()
            .ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))?;
        let bad = |e: &dyn std::fmt::Display| format!("invalid value {value:?} for {flag}: {e}");
        match flag.as_str() {
            "--output" | "-o" => options.output = PathBuf::from(&value),
            "--balls" => options.balls = value.parse().map_err(|e| bad(&e))?,
            "--steps" => options.steps = value.parse().map_err(|e| bad(&e))?,
            "--seed" => options.seed = value.parse().map_err(|e| bad(&e))?,
            "--dt" => options.dt = value.parse().map_err(|e| bad(&e))?,
            _ => return Err(format!("unknown option {flag}\n{USAGE}")),
        }
    }
    Ok(Some(options))
}

/// What the run produced, for the summary and the picture.
struct Record {
    /// Ball positions after every step (index: step, then ball).
    trajectories: Vec<Vec<DVec3>>,
    contacts: Vec<ContactEvent>,
    energy: (f64, f64, f64, f64),
    deepest: f64,
    resting: usize,
    truncated_steps: usize,
}

fn simulate(sim: &mut Simulation, steps: usize) -> Record {
    let e0 = sim.total_energy();
    let (mut lo, mut hi) = (e0, e0);
    let mut deepest = 0.0f64;
    let mut resting = 0;
    let mut truncated_steps = 0;
    let mut contacts = Vec::new();
    let mut trajectories = vec![sim.balls().iter().map(|b| b.position).collect::<Vec<_>>()];
    for _ in 0..steps {
        let report = sim.step();
        contacts.extend(report.contacts);
        resting = report.resting;
        truncated_steps += usize::from(report.truncated);
        if let Some(p) = sim.deepest_penetration() {
            deepest = deepest.max(p.depth);
        }
        let e = sim.total_energy();
        lo = lo.min(e);
        hi = hi.max(e);
        trajectories.push(sim.balls().iter().map(|b| b.position).collect());
    }
    Record {
        trajectories,
        contacts,
        energy: (e0, lo, hi, sim.total_energy()),
        deepest,
        resting,
        truncated_steps,
    }
}

/// An RGB image with simple rasterising primitives.
struct Canvas {
    width: usize,
    height: usize,
    pixels: Vec<[u8; 3]>,
}

impl Canvas {
    fn new(width: usize, height: usize, background: [u8; 3]) -> Self {
        Self {
            width,
            height,
            pixels: vec![background; width * height],
        }
    }

    /// Blends `color` into pixel (x, y) with opacity `alpha`.
    fn plot(&mut self, x: i64, y: i64, color: [u8; 3], alpha: f64) {
        if x < 0 || y < 0 || x >= self.width as i64 || y >= self.height as i64 {
            return;
        }
        let p = &mut self.pixels[y as usize * self.width + x as usize];
        for (c, &t) in p.iter_mut().zip(color.iter()) {
            *c = (f64::from(*c) * (1.0 - alpha) + f64::from(t) * alpha).round() as u8;
        }
    }

    /// Bresenham line.
    fn line(&mut self, a: (i64, i64), b: (i64, i64), color: [u8; 3], alpha: f64) {
        let (mut x, mut y) = a;
        let (dx, dy) = ((b.0 - a.0).abs(), -(b.1 - a.1).abs());
        let (sx, sy) = ((b.0 - a.0).signum(), (b.1 - a.1).signum());
        let mut err = dx + dy;
        loop {
            self.plot(x, y, color, alpha);
            if (x, y) == b {
                break;
            }
            let e2 = 2 * err;
            if e2 >= dy {
                err += dy;
                x += sx;
            }
            if e2 <= dx {
                err += dx;
                y += sy;
            }
        }
    }

    fn fill_rect(&mut self, a: (i64, i64), b: (i64, i64), color: [u8; 3]) {
        for y in a.1.min(b.1)..=a.1.max(b.1) {
            for x in a.0.min(b.0)..=a.0.max(b.0) {
                self.plot(x, y, color, 1.0);
            }
        }
    }

    fn fill_circle(&mut self, c: (i64, i64), r: i64, color: [u8; 3]) {
        for y in -r..=r {
            for x in -r..=r {
                if x * x + y * y <= r * r {
                    self.plot(c.0 + x, c.1 + y, color, 1.0);
                }
            }
        }
    }

    fn cross(&mut self, c: (i64, i64), color: [u8; 3]) {
        self.line((c.0 - 1, c.1 - 1), (c.0 + 1, c.1 + 1), color, 0.8);
        self.line((c.0 - 1, c.1 + 1), (c.0 + 1, c.1 - 1), color, 0.8);
    }

    fn write_png(&self, path: &std::path::Path) -> Result<(), Box<dyn Error>> {
        let file = BufWriter::new(File::create(path)?);
        let mut encoder = png::Encoder::new(file, self.width as u32, self.height as u32);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header()?;
        writer.write_image_data(&self.pixels.concat())?;
        Ok(())
    }
}

/// A panel mapping a world rectangle (two chosen coordinates) to pixels.
struct Panel {
    origin: (i64, i64),
    scale: f64,
    world_min: DVec2,
    world_max: DVec2,
    project: fn(DVec3) -> DVec2,
}

impl Panel {
    fn to_pixel(&self, p: DVec3) -> (i64, i64) {
        let q = (self.project)(p) - self.world_min;
        let height = (self.world_max.y - self.world_min.y) * self.scale;
        (
            self.origin.0 + (q.x * self.scale).round() as i64,
            self.origin.1 + (height - q.y * self.scale).round() as i64,
        )
    }
}

/// A distinct colour per ball (hue wheel).
fn ball_color(i: usize, n: usize) -> [u8; 3] {
    let h = i as f64 / n.max(1) as f64 * 6.0;
    let x = 1.0 - ((h % 2.0) - 1.0).abs();
    let (r, g, b) = match h as usize {
        0 => (1.0, x, 0.0),
        1 => (x, 1.0, 0.0),
        2 => (0.0, 1.0, x),
        3 => (0.0, x, 1.0),
        4 => (x, 0.0, 1.0),
        _ => (1.0, 0.0, x),
    };
    let c = |v: f64| (80.0 + 175.0 * v) as u8;
    [c(r), c(g), c(b)]
}

fn contact_color(obstacle: Obstacle) -> [u8; 3] {
    match obstacle {
        Obstacle::Wall(_) => [255, 255, 255],
        Obstacle::Pillar(_) => [255, 60, 60],
        Obstacle::Ball(_) => [255, 220, 0],
    }
}

fn draw(room: &Room, record: &Record) -> Canvas {
    const SCALE: f64 = 70.0;
    const MARGIN: i64 = 20;
    let (min, max) = (room.min(), room.max());
    let top = Panel {
        origin: (MARGIN, MARGIN),
        scale: SCALE,
        world_min: min.truncate(),
        world_max: max.truncate(),
        project: |p| DVec2::new(p.x, p.y),
    };
    let top_size = ((max - min).truncate() * SCALE).round();
    let side = Panel {
        origin: (2 * MARGIN + top_size.x as i64, MARGIN),
        scale: SCALE,
        world_min: DVec2::new(min.x, min.z),
        world_max: DVec2::new(max.x, max.z),
        project: |p| DVec2::new(p.x, p.z),
    };
    let width = (3 * MARGIN + 2 * top_size.x as i64) as usize;
    let height = (2 * MARGIN + top_size.y.max((max.z - min.z) * SCALE) as i64) as usize;
    let mut canvas = Canvas::new(width, height, [18, 18, 28]);

    // Room floors and pillars.
    for panel in [&top, &side] {
        let a = panel.to_pixel(min);
        let b = panel.to_pixel(max);
        canvas.fill_rect(a, b, [34, 34, 48]);
    }
    for pillar in room.pillars() {
        let c = pillar.point();
        let r = (pillar.radius() * SCALE).round() as i64;
        canvas.fill_circle(top.to_pixel(c), r, [90, 90, 110]);
        let left = side.to_pixel(DVec3::new(c.x - pillar.radius(), 0.0, min.z));
        let right = side.to_pixel(DVec3::new(c.x + pillar.radius(), 0.0, max.z));
        canvas.fill_rect(left, right, [70, 70, 90]);
    }

    // Trajectories.
    let n = record.trajectories.first().map_or(0, Vec::len);
    for pair in record.trajectories.windows(2) {
        for (i, (a, b)) in pair[0].iter().zip(&pair[1]).enumerate() {
            for panel in [&top, &side] {
                canvas.line(
                    panel.to_pixel(*a),
                    panel.to_pixel(*b),
                    ball_color(i, n),
                    0.35,
                );
            }
        }
    }

    // Contacts.
    for c in &record.contacts {
        for panel in [&top, &side] {
            canvas.cross(panel.to_pixel(c.point), contact_color(c.obstacle));
        }
    }
    canvas
}

fn main() -> Result<(), Box<dyn Error>> {
    let options = match parse_options(std::env::args().skip(1))? {
        Some(o) => o,
        None => {
            println!("{USAGE}");
            return Ok(());
        }
    };
    let settings = Settings::with_dt(options.dt);
    let mut sim = Simulation::random(Room::demo(), options.balls, options.seed, settings)?;

    let started = Instant::now();
    let record = simulate(&mut sim, options.steps);
    let elapsed = started.elapsed();

    let count =
        |f: fn(&Obstacle) -> bool| record.contacts.iter().filter(|c| f(&c.obstacle)).count();
    let walls = count(|o| matches!(o, Obstacle::Wall(_)));
    let pillars = count(|o| matches!(o, Obstacle::Pillar(_)));
    let balls = count(|o| matches!(o, Obstacle::Ball(_)));
    let (e0, lo, hi, e1) = record.energy;
    let room = sim.room();
    println!(
        "magic room: {} balls, {} pillars, room {:?} .. {:?} m",
        sim.balls().len(),
        room.pillars().len(),
        room.min(),
        room.max()
    );
    println!(
        "simulated {} steps of {} s = {:.2} s in {:.3} s wall time",
        sim.steps(),
        options.dt,
        sim.time(),
        elapsed.as_secs_f64()
    );
    println!(
        "contacts: {} total ({walls} wall, {pillars} pillar, {balls} ball–ball); steps truncated: {}",
        record.contacts.len(),
        record.truncated_steps
    );
    println!(
        "energy: start {e0:.4} J, end {e1:.4} J ({:+.3} %), range [{:+.3} %, {:+.3} %]",
        100.0 * (e1 - e0) / e0,
        100.0 * (lo - e0) / e0,
        100.0 * (hi - e0) / e0
    );
    println!(
        "deepest penetration after any step: {:.3e} m; balls resting on the floor at the end: {}",
        record.deepest, record.resting
    );

    let canvas = draw(room, &record);
    canvas.write_png(&options.output)?;
    println!(
        "wrote {} ({}×{} px: top view x–y left, side view x–z right; crosses: white wall, red pillar, yellow ball contacts)",
        options.output.display(),
        canvas.width,
        canvas.height
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options() {
        let args = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
        let o = parse_options(args("--balls 5 --output x.png --dt 0.01"))
            .unwrap()
            .unwrap();
        assert_eq!((o.balls, o.dt, o.output), (5, 0.01, PathBuf::from("x.png")));
        assert!(parse_options(args("--help")).unwrap().is_none());
        assert!(parse_options(args("--balls")).is_err());
        assert!(parse_options(args("--balls many")).is_err());
        assert!(parse_options(args("--colour red")).is_err());
    }
}
