//! The route a vehicle drives: a polyline on the ground plane (x, z), sampled by
//! distance travelled, so a constant speed gives evenly spaced frames.

use glam::{DMat4, DVec2, Vec3};
use scene_intersect::prelude::*;

use super::scene_walk::for_each_drawable;

/// A polyline in the ground plane (world x, z), with its cumulative lengths.
#[derive(Clone, Debug, PartialEq)]
pub struct Route {
    points: Vec<DVec2>,
    /// `cumulative[i]`: distance from the start to `points[i]`.
    cumulative: Vec<f64>,
}

impl Route {
    /// A route through `points` (consecutive duplicates are dropped). It needs at least
    /// two distinct, finite points.
    pub fn new(points: impl IntoIterator<Item = DVec2>) -> Result<Self, String> {
        let mut kept: Vec<DVec2> = Vec::new();
        for p in points {
            if !p.is_finite() {
                return Err(format!("route point ({}, {}) is not finite", p.x, p.y));
            }
            if kept.last() != Some(&p) {
                kept.push(p);
            }
        }
        if kept.len() < 2 {
            return Err("a route needs at least two distinct points".to_string());
        }
        let mut cumulative = Vec::with_capacity(kept.len());
        let mut total = 0.0;
        cumulative.push(0.0);
        for w in kept.windows(2) {
            total += w[0].distance(w[1]);
            cumulative.push(total);
        }
        Ok(Route {
            points: kept,
            cumulative,
        })
    }

    /// The waypoints.
    pub fn points(&self) -> &[DVec2] {
        &self.points
    }

    /// Total length, metres.
    pub fn length(&self) -> f64 {
        self.cumulative.last().copied().unwrap_or(0.0)
    }

    /// The position and unit heading at distance `s` from the start (clamped to the
    /// route: before the start it is the start, past the end the end). At a waypoint the
    /// heading is the next leg's.
    pub fn sample(&self, s: f64) -> (DVec2, DVec2) {
        let s = s.clamp(0.0, self.length());
        // The leg holding s: the last i with cumulative[i] <= s, and never the last point.
        let i = self
            .cumulative
            .partition_point(|&c| c <= s)
            .saturating_sub(1)
            .min(self.points.len() - 2);
        let (a, b) = (self.points[i], self.points[i + 1]);
        let leg = self.cumulative[i + 1] - self.cumulative[i];
        let t = ((s - self.cumulative[i]) / leg).clamp(0.0, 1.0);
        (a + (b - a) * t, (b - a) / leg)
    }

    /// The route followed by a straight leg of `length` metres from its end towards
    /// `direction` (which need not be normalized).
    pub fn with_leg(&self, direction: DVec2, length: f64) -> Result<Route, String> {
        let d = direction.normalize_or_zero();
        if d == DVec2::ZERO || length.is_nan() || length <= 0.0 {
            return Ok(self.clone());
        }
        let end = self.points[self.points.len() - 1];
        Route::new(self.points.iter().copied().chain([end + d * length]))
    }

    /// The mean of the waypoints (the last one skipped when it closes the loop).
    pub fn centroid(&self) -> DVec2 {
        let n = self.points.len();
        let pts = if self.points[0] == self.points[n - 1] {
            &self.points[..n - 1]
        } else {
            &self.points[..]
        };
        pts.iter().copied().sum::<DVec2>() / pts.len() as f64
    }
}

/// Parses `x0,z0;x1,z1;...` (world metres).
pub fn parse_route(text: &str) -> Result<Route, String> {
    let points = text
        .split(';')
        .filter(|p| !p.trim().is_empty())
        .map(|pair| {
            let mut it = pair.split(',').map(|v| v.trim().parse::<f64>());
            match (it.next(), it.next(), it.next()) {
                (Some(Ok(x)), Some(Ok(z)), None) => Ok(DVec2::new(x, z)),
                _ => Err(format!("route point `{pair}` is not `x,z`")),
            }
        })
        .collect::<Result<Vec<_>, String>>()?;
    Route::new(points)
}

/// The route drawn in the scene as lines under `node` (a LINE_STRIP such as the city's
/// `route`): its vertices in world space, in drawing order, projected on the ground.
pub fn route_from_node(scene: &SceneGraph, node: NodeId) -> Result<Route, String> {
    struct Collect {
        matrix: DMat4,
        points: Vec<DVec2>,
    }
    impl PrimitiveFunctor for Collect {
        fn line(&mut self, v: [Vec3; 2], _i: [u32; 2], _p: u32) {
            for p in v {
                let w = self.matrix.transform_point3(p.as_dvec3());
                let q = DVec2::new(w.x, w.z);
                if self.points.last() != Some(&q) {
                    self.points.push(q);
                }
            }
        }
    }
    let path = scene
        .node_paths_to(node)
        .into_iter()
        .next()
        .ok_or("the route node is not in the scene")?;
    let above = scene
        .local_to_world(&path[..path.len() - 1])
        .map_err(|e| e.to_string())?;
    let mut collect = Collect {
        matrix: DMat4::IDENTITY,
        points: Vec::new(),
    };
    for_each_drawable(scene, node, above, u32::MAX, &mut |m, _, _, d| {
        collect.matrix = *m;
        d.accept(&mut collect);
    });
    Route::new(collect.points).map_err(|e| format!("the route node's lines: {e}"))
}
