//! The command-line options `pick` and `render` share: the scene and the camera.

use std::path::PathBuf;

use glam::DVec3;
use scene_intersect::bounding::BoundingSphere;

use super::camera::Camera;

/// Usage lines of the shared options.
pub const VIEW_USAGE: &str = "\
  --scene PATH        glTF scene (default: data/city.glb of the crate)
  --eye X,Y,Z         eye position (default: framing the scene's bounding sphere)
  --target X,Y,Z      point looked at (default: the bounding sphere's centre)
  --from X,Y,Z        direction from the target to the default eye (default 0.6,0.7,1)
  --fov DEGREES       vertical field of view (default 45)
  --size WxH          viewport size in pixels (default 640x480)
  --near D --far D    clip planes (default: holding the whole scene)";

/// The scene and camera options.
#[derive(Clone, Debug, PartialEq)]
pub struct ViewArgs {
    /// Scene file.
    pub scene: PathBuf,
    /// Eye, when given.
    pub eye: Option<DVec3>,
    /// Target, when given.
    pub target: Option<DVec3>,
    /// Default viewing direction.
    pub from: DVec3,
    /// Vertical field of view, degrees.
    pub fov: f64,
    /// Viewport size.
    pub size: (u32, u32),
    /// Clip planes, when given.
    pub near: Option<f64>,
    /// See [`ViewArgs::near`].
    pub far: Option<f64>,
}

impl Default for ViewArgs {
    fn default() -> Self {
        ViewArgs {
            scene: PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/city.glb"),
            eye: None,
            target: None,
            from: DVec3::new(0.6, 0.7, 1.0),
            fov: 45.0,
            size: (640, 480),
            near: None,
            far: None,
        }
    }
}

impl ViewArgs {
    /// Takes `flag` with its `value` if it is one of the shared options: `Ok(false)` when
    /// it is not.
    pub fn take(
        &mut self,
        flag: &str,
        value: &mut dyn FnMut() -> Result<String, String>,
    ) -> Result<bool, String> {
        match flag {
            "--scene" => self.scene = PathBuf::from(value()?),
            "--eye" => self.eye = Some(parse_vec3(flag, &value()?)?),
            "--target" => self.target = Some(parse_vec3(flag, &value()?)?),
            "--from" => self.from = parse_vec3(flag, &value()?)?,
            "--fov" => self.fov = parse_number(flag, &value()?)?,
            "--size" => self.size = parse_size(&value()?)?,
            "--near" => self.near = Some(parse_number(flag, &value()?)?),
            "--far" => self.far = Some(parse_number(flag, &value()?)?),
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The camera for a scene whose bounding sphere is `bound`.
    pub fn camera(&self, bound: &BoundingSphere) -> Result<Camera, String> {
        let mut camera = match (self.eye, self.target) {
            (None, None) => Camera::framing(bound, self.from, self.fov, self.size),
            (eye, target) => {
                let target = target.unwrap_or(bound.center);
                let eye = eye.unwrap_or_else(|| {
                    Camera::framing(bound, self.from, self.fov, self.size).eye - bound.center
                        + target
                });
                Camera::looking(eye, target, self.fov, self.size, bound)
            }
        };
        if let Some(near) = self.near {
            camera.near = near;
        }
        if let Some(far) = self.far {
            camera.far = far;
        }
        camera.validate()?;
        Ok(camera)
    }
}

fn parse_number(flag: &str, text: &str) -> Result<f64, String> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .ok_or_else(|| format!("{flag}: `{text}` is not a number"))
}

/// `X,Y,Z`.
pub fn parse_vec3(flag: &str, text: &str) -> Result<DVec3, String> {
    let v: Vec<f64> = text
        .split(',')
        .map(|t| parse_number(flag, t))
        .collect::<Result<_, _>>()?;
    match v[..] {
        [x, y, z] => Ok(DVec3::new(x, y, z)),
        _ => Err(format!("{flag}: `{text}` is not X,Y,Z")),
    }
}

/// `X,Y` as two numbers.
pub fn parse_pair(flag: &str, text: &str) -> Result<(f64, f64), String> {
    let v: Vec<f64> = text
        .split(',')
        .map(|t| parse_number(flag, t))
        .collect::<Result<_, _>>()?;
    match v[..] {
        [x, y] => Ok((x, y)),
        _ => Err(format!("{flag}: `{text}` is not X,Y")),
    }
}

/// `WxH`, both in 1..=16384.
fn parse_size(text: &str) -> Result<(u32, u32), String> {
    let bad = || format!("--size: `{text}` is not WxH with sides in 1..=16384");
    let (w, h) = text.split_once('x').ok_or_else(bad)?;
    let side = |s: &str| {
        s.trim()
            .parse::<u32>()
            .ok()
            .filter(|v| (1..=16384).contains(v))
            .ok_or_else(bad)
    };
    Ok((side(w)?, side(h)?))
}
