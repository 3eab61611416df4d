//! Property tests of the collision toolkit against brute-force references.

#[path = "support/cases.rs"]
mod cases;

use cases::cases;
use glam::{DQuat, DVec3};
use proptest::prelude::*;
use scene_intersect::collide::{
    closest_point_on_triangle, elastic_collision_spheres, intersection_test_obb_obb,
    reflect_velocity, time_of_impact_sphere_cylinder, time_of_impact_sphere_plane,
    time_of_impact_sphere_sphere, Contact, Cylinder, MovingSphere, Obb, Plane,
};

fn vec3(range: f64) -> impl Strategy<Value = DVec3> {
    (-range..range, -range..range, -range..range).prop_map(|(x, y, z)| DVec3::new(x, y, z))
}

fn unit_vector() -> impl Strategy<Value = DVec3> {
    vec3(1.0).prop_filter_map("non-zero direction", |v| {
        (v.length() > 1e-3).then(|| v.normalize())
    })
}

fn rotation() -> impl Strategy<Value = DQuat> {
    (unit_vector(), -std::f64::consts::PI..std::f64::consts::PI)
        .prop_map(|(axis, angle)| DQuat::from_axis_angle(axis, angle))
}

fn obb() -> impl Strategy<Value = Obb> {
    (vec3(2.5), rotation(), (0.05..2.0, 0.05..2.0, 0.05..2.0))
        .prop_map(|(c, q, (x, y, z))| Obb::new(c, q, DVec3::new(x, y, z)))
}

/// Largest separation gap of two convex vertex sets over the candidate axes built
/// from the boxes' own geometry: face normals (cross products of edges meeting at a
/// corner) and all edge × edge cross products. Positive: separated by that much.
fn brute_force_sat_gap(a: &Obb, b: &Obb) -> f64 {
    let (ca, cb) = (a.corners(), b.corners());
    // Corners 1, 2, 4 differ from corner 0 along the three edge directions.
    let edges = |c: &[DVec3; 8]| [c[1] - c[0], c[2] - c[0], c[4] - c[0]];
    let (ea, eb) = (edges(&ca), edges(&cb));
    let mut axes = Vec::new();
    for e in [ea, eb] {
        axes.push(e[0].cross(e[1]));
        axes.push(e[1].cross(e[2]));
        axes.push(e[2].cross(e[0]));
    }
    for u in ea {
        for v in eb {
            axes.push(u.cross(v));
        }
    }
    let mut best = f64::NEG_INFINITY;
    for axis in axes {
        let Some(l) = axis.try_normalize() else {
            continue;
        };
        if axis.length() < 1e-6 * 16.0 {
            continue; // (nearly) parallel edges give no usable axis
        }
        let project = |c: &[DVec3; 8]| {
            c.iter()
                .map(|p| p.dot(l))
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
                    (lo.min(x), hi.max(x))
                })
        };
        let (a_lo, a_hi) = project(&ca);
        let (b_lo, b_hi) = project(&cb);
        best = best.max((b_lo - a_hi).max(a_lo - b_hi));
    }
    best
}

/// `default_cases` cases (scaled by `PROPERTY_SCALE`), and as many more rejected draws
/// allowed as the cases grow.
fn config(default_cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases: cases(default_cases),
        max_global_rejects: cases(ProptestConfig::default().max_global_rejects),
        ..ProptestConfig::default()
    }
}

/// Checks a time of impact against fine sub-stepping of the gap function
/// (positive when apart). The shapes start apart (`gap(0) > 0`).
fn check_against_substeps(
    toi: Option<Contact>,
    gap: impl Fn(f64) -> f64,
    max_time: f64,
    gap_rate: f64,
) -> Result<(), TestCaseError> {
    const N: usize = 20_000;
    let h = max_time / N as f64;
    let first_touch = (0..=N).map(|k| k as f64 * h).find(|&t| gap(t) <= 0.0);
    let min_gap = (0..=N)
        .map(|k| gap(k as f64 * h))
        .fold(f64::INFINITY, f64::min);
    match (toi, first_touch) {
        (Some(c), Some(t_sub)) => {
            // The exact time lies in the sub-step that first shows contact.
            prop_assert!(
                c.time <= t_sub + 1e-9,
                "toi {} after sampled contact {}",
                c.time,
                t_sub
            );
            prop_assert!(
                t_sub - c.time <= h + 1e-9,
                "toi {} long before sampled {}",
                c.time,
                t_sub
            );
            prop_assert!(gap(c.time).abs() <= 1e-9, "gap at toi = {}", gap(c.time));
        }
        (Some(c), None) => {
            // Grazing contact between two samples: the gap dips below the sampling
            // resolution only.
            prop_assert!(gap(c.time).abs() <= 1e-9);
            prop_assert!(
                min_gap <= gap_rate * h + 1e-9,
                "missed toi {}, min gap {}",
                c.time,
                min_gap
            );
        }
        (None, Some(t_sub)) => {
            prop_assert!(false, "sampled contact at {t_sub} but no toi");
        }
        (None, None) => {}
    }
    Ok(())
}

proptest! {
    #![proptest_config(config(512))]

    #[test]
    fn obb_test_agrees_with_brute_force_sat(a in obb(), b in obb()) {
        let gap = brute_force_sat_gap(&a, &b);
        // Skip configurations within rounding of touching.
        prop_assume!(gap.abs() > 1e-9);
        prop_assert_eq!(intersection_test_obb_obb(&a, &b), gap < 0.0);
        prop_assert_eq!(intersection_test_obb_obb(&b, &a), gap < 0.0);
    }
}

proptest! {
    #![proptest_config(config(128))]

    #[test]
    fn sphere_plane_toi_agrees_with_substeps(
        c in vec3(5.0), r in 0.0..2.0f64, v in vec3(10.0), n in unit_vector(), d in -2.0..2.0f64,
    ) {
        let plane = Plane::new(n, d).unwrap();
        let s = MovingSphere::new(c, r, v);
        let s0 = plane.signed_distance(c);
        prop_assume!(s0.abs() > r + 1e-6);
        // Gap measured on the side the centre starts on.
        let gap = |t: f64| s0.signum() * plane.signed_distance(s.center_at(t)) - r;
        check_against_substeps(time_of_impact_sphere_plane(&s, &plane, 1.0), gap, 1.0, v.length())?;
    }

    #[test]
    fn sphere_sphere_toi_agrees_with_substeps(
        c1 in vec3(5.0), r1 in 0.0..1.5f64, v1 in vec3(10.0),
        c2 in vec3(5.0), r2 in 0.0..1.5f64, v2 in vec3(10.0),
    ) {
        let a = MovingSphere::new(c1, r1, v1);
        let b = MovingSphere::new(c2, r2, v2);
        let gap = |t: f64| a.center_at(t).distance(b.center_at(t)) - r1 - r2;
        prop_assume!(gap(0.0) > 1e-6);
        let toi = time_of_impact_sphere_sphere(&a, &b, 1.0);
        if let Some(c) = toi {
            // The normal points from b to a at contact and the point is on b's surface.
            let n = (a.center_at(c.time) - b.center_at(c.time)).normalize();
            prop_assert!((c.normal - n).length() < 1e-9);
            prop_assert!((c.point.distance(b.center_at(c.time)) - r2).abs() < 1e-9);
        }
        check_against_substeps(toi, gap, 1.0, (v1 - v2).length())?;
    }

    #[test]
    fn sphere_cylinder_toi_agrees_with_substeps(
        c in vec3(5.0), r in 0.0..1.5f64, v in vec3(10.0),
        p in vec3(2.0), axis in unit_vector(), radius in 0.0..1.5f64,
    ) {
        let cylinder = Cylinder::new(p, axis, radius).unwrap();
        let s = MovingSphere::new(c, r, v);
        let gap = |t: f64| cylinder.distance_to_axis(s.center_at(t)) - radius - r;
        prop_assume!(gap(0.0) > 1e-6);
        check_against_substeps(time_of_impact_sphere_cylinder(&s, &cylinder, 1.0), gap, 1.0, v.length())?;
    }
}

proptest! {
    #[test]
    fn elastic_response_conserves_momentum_and_energy(
        m1 in 0.01..100.0f64, v1 in vec3(10.0), m2 in 0.01..100.0f64, v2 in vec3(10.0),
        n in vec3(1.0),
    ) {
        prop_assume!(n.length() > 1e-3);
        let (w1, w2) = elastic_collision_spheres(m1, v1, m2, v2, n);
        let p0 = m1 * v1 + m2 * v2;
        let p1 = m1 * w1 + m2 * w2;
        let momentum_scale = m1 * v1.length() + m2 * v2.length();
        prop_assert!((p1 - p0).length() <= 1e-9 * momentum_scale.max(1e-300));
        let e0 = 0.5 * m1 * v1.length_squared() + 0.5 * m2 * v2.length_squared();
        let e1 = 0.5 * m1 * w1.length_squared() + 0.5 * m2 * w2.length_squared();
        prop_assert!((e1 - e0).abs() <= 1e-9 * e0.max(1e-300));
    }

    #[test]
    fn reflection_keeps_speed_and_flips_the_normal_part(v in vec3(100.0), n in vec3(1.0)) {
        prop_assume!(n.length() > 1e-3);
        let w = reflect_velocity(v, n);
        let n = n.normalize();
        prop_assert!((w.length() - v.length()).abs() <= 1e-12 * v.length().max(1.0));
        prop_assert!((w.dot(n) + v.dot(n)).abs() <= 1e-12 * v.length().max(1.0));
    }

    #[test]
    fn closest_point_on_triangle_beats_samples(
        p in vec3(5.0), a in vec3(3.0), b in vec3(3.0), c in vec3(3.0),
    ) {
        let q = closest_point_on_triangle(p, a, b, c);
        let best = p.distance(q);
        for i in 0..=10 {
            for j in 0..=(10 - i) {
                let (u, v) = (i as f64 / 10.0, j as f64 / 10.0);
                let s = a + u * (b - a) + v * (c - a);
                prop_assert!(best <= p.distance(s) + 1e-9);
            }
        }
    }
}
