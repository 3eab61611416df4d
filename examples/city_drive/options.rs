//! Command-line options of `city_drive`.

use std::path::PathBuf;

/// The usage text.
pub const USAGE: &str = "\
usage: city_drive [options]
  --scene PATH          glTF scene (default: data/city.glb of the crate)
  --vehicle NAME        the vehicle's node (default: vehicle); with --vehicle-file, a node
                        of that file, imported into the scene under a new Transform
  --vehicle-file PATH   take the vehicle from another glTF file
  --route X,Z;X,Z;...   waypoints (world metres) instead of the scene's `route` node
  --frames N            frames to drive (default: the whole route once)
  --speed M_PER_S       speed (default 10)
  --fps F               frames per second (default 30)
  --out PATH            the PNG map (default: city_drive.png)
  --ignore A,B,...      terrain node names: their hits are not contacts and the ground
                        height comes from them (default: ground,Terrain)
  --inflate M           margin added to the vehicle's box on every side (default 0.25)
  --crash-leg M         after a default route, drive M metres straight towards the
                        route's centre, off the streets (default 60; 0: none)
  --progress N          a progress line on stderr every N frames (default 1000; 0: none)
  -h, --help            this text";

/// Parsed options.
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    /// Scene file.
    pub scene: PathBuf,
    /// Vehicle node name.
    pub vehicle: String,
    /// File to import the vehicle from.
    pub vehicle_file: Option<PathBuf>,
    /// Explicit route.
    pub route: Option<String>,
    /// Frame count.
    pub frames: Option<usize>,
    /// Metres per second.
    pub speed: f64,
    /// Frames per second.
    pub fps: f64,
    /// Output PNG.
    pub out: PathBuf,
    /// Terrain names.
    pub ignore: Vec<String>,
    /// Box margin, metres.
    pub inflate: f64,
    /// Crash-leg length, metres.
    pub crash_leg: f64,
    /// Progress period, frames.
    pub progress: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            scene: PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/city.glb"),
            vehicle: "vehicle".to_string(),
            vehicle_file: None,
            route: None,
            frames: None,
            speed: 10.0,
            fps: 30.0,
            out: PathBuf::from("city_drive.png"),
            ignore: vec!["ground".to_string(), "Terrain".to_string()],
            inflate: 0.25,
            crash_leg: 60.0,
            progress: 1000,
        }
    }
}

impl Options {
    /// Parses the arguments (program name excluded); `Ok(None)` when help was asked for.
    pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Option<Options>, String> {
        let mut o = Options::default();
        let mut args = args.into_iter();
        while let Some(flag) = args.next() {
            if flag == "-h" || flag == "--help" {
                return Ok(None);
            }
            let mut value = || args.next().ok_or_else(|| format!("{flag} needs a value"));
            match flag.as_str() {
                "--scene" => o.scene = PathBuf::from(value()?),
                "--vehicle" => o.vehicle = value()?,
                "--vehicle-file" => o.vehicle_file = Some(PathBuf::from(value()?)),
                "--route" => o.route = Some(value()?),
                "--frames" => o.frames = Some(positive(&flag, &value()?)? as usize),
                "--speed" => o.speed = positive(&flag, &value()?)?,
                "--fps" => o.fps = positive(&flag, &value()?)?,
                "--out" => o.out = PathBuf::from(value()?),
                "--ignore" => {
                    o.ignore = value()?
                        .split(',')
                        .map(str::trim)
                        .filter(|s| !s.is_empty())
                        .map(String::from)
                        .collect();
                }
                "--inflate" => o.inflate = non_negative(&flag, &value()?)?,
                "--crash-leg" => o.crash_leg = non_negative(&flag, &value()?)?,
                "--progress" => o.progress = non_negative(&flag, &value()?)? as usize,
                other => return Err(format!("unknown option `{other}`")),
            }
        }
        Ok(Some(o))
    }
}

fn number(flag: &str, text: &str) -> Result<f64, String> {
    text.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .ok_or_else(|| format!("{flag}: `{text}` is not a number"))
}

fn positive(flag: &str, text: &str) -> Result<f64, String> {
    let v = number(flag, text)?;
    if v > 0.0 && v <= 1e9 {
        Ok(v)
    } else {
        Err(format!("{flag}: `{text}` must be positive"))
    }
}

fn non_negative(flag: &str, text: &str) -> Result<f64, String> {
    let v = number(flag, text)?;
    if (0.0..=1e9).contains(&v) {
        Ok(v)
    } else {
        Err(format!("{flag}: `{text}` must not be negative"))
    }
}
