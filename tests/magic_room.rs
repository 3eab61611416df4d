//! The bouncing-balls room over a long run: no ball ever ends a step inside a
//! wall, a pillar or another ball, and the mechanical energy stays bounded.

use scene_intersect::collide::room::{Room, Settings, Simulation};

/// Overlap tolerated after a step: floating-point rounding only.
const PENETRATION_TOLERANCE: f64 = 1e-9;

/// Runs `steps` steps of `balls` balls, checking every step; returns
/// (min, max) total energy relative to the start and the number of contacts.
fn run(balls: usize, steps: usize, seed: u64) -> (f64, f64, usize) {
    let mut sim = Simulation::random(Room::demo(), balls, seed, Settings::default())
        .expect("20 balls fit in the demo room");
    let e0 = sim.total_energy();
    let (mut lo, mut hi) = (e0, e0);
    let mut contacts = 0;
    for step in 0..steps {
        let report = sim.step();
        assert!(!report.truncated, "step {step} hit the event cap");
        contacts += report.contacts.len();
        if let Some(p) = sim.deepest_penetration() {
            assert!(
                p.depth <= PENETRATION_TOLERANCE,
                "step {step}: ball {} penetrates {:?} by {}",
                p.ball,
                p.obstacle,
                p.depth
            );
        }
        let e = sim.total_energy();
        lo = lo.min(e);
        hi = hi.max(e);
    }
    (lo / e0, hi / e0, contacts)
}

#[test]
fn twenty_balls_ten_thousand_steps_without_penetration() {
    let (lo, hi, contacts) = run(20, 10_000, 2024);
    assert!(
        contacts > 1000,
        "the balls should collide a lot, got {contacts}"
    );
    // Elastic contacts and frictionless walls: only the Euler discretisation and the
    // resting clamp change the energy. Bounded within a few percent over 50 s.
    assert!(lo > 0.95 && hi < 1.05, "energy left [{lo}, {hi}] × E0");
}

#[test]
#[ignore = "long run (5 seeds × 40 000 steps × 30 balls, ~15 s in debug); run with --ignored"]
fn many_seeds_long_run() {
    for seed in 0..5 {
        let (lo, hi, _) = run(30, 40_000, seed);
        assert!(
            lo > 0.9 && hi < 1.1,
            "seed {seed}: energy left [{lo}, {hi}] × E0"
        );
    }
}

/// Newton's cradle on the floor: five touching balls at rest, a sixth rolling into
/// them at 2 m/s. Equal masses and horizontal normals: each contact swaps the
/// velocities, the chain of touching contacts resolves at t = 0 within one step,
/// and every ball keeps resting on the floor (height exactly r, no jitter).
///
/// By hand: the roller starts at x = 1, the row at x = 3, 3.5, …, 5 (r = 0.25, so
/// touching); contact when the roller reaches x = 2.5 at t = 0.75 s. At t = 1 s the
/// last ball has rolled 0.25 s · 2 m/s = 0.5 m → x = 5.5, all others are at rest.
#[test]
fn cradle_on_the_floor_keeps_resting_contact() {
    use glam::DVec3;
    use scene_intersect::collide::room::Ball;

    let r = 0.25;
    let room = Room::new(DVec3::ZERO, DVec3::new(10.0, 4.0, 4.0)).unwrap();
    let mut balls = vec![Ball::new(
        DVec3::new(1.0, 2.0, r),
        DVec3::new(2.0, 0.0, 0.0),
        r,
        1.0,
    )];
    for k in 0..5 {
        let x = 3.0 + 0.5 * k as f64;
        balls.push(Ball::new(DVec3::new(x, 2.0, r), DVec3::ZERO, r, 1.0));
    }
    let mut sim = Simulation::new(room, balls, Settings::with_dt(0.005)).unwrap();
    for _ in 0..200 {
        let report = sim.step();
        assert_eq!(report.resting, 6);
        for b in sim.balls() {
            assert_eq!(b.position.z, r, "a resting ball left the floor");
            assert_eq!(b.velocity.z, 0.0);
        }
        assert!(sim
            .deepest_penetration()
            .is_none_or(|p| p.depth <= PENETRATION_TOLERANCE));
    }
    assert!((sim.time() - 1.0).abs() < 1e-12);
    let balls = sim.balls();
    assert!((balls[0].position.x - 2.5).abs() < 1e-9);
    assert_eq!(balls[0].velocity, DVec3::ZERO);
    for b in &balls[1..5] {
        assert_eq!(b.velocity, DVec3::ZERO);
    }
    assert_eq!(balls[5].velocity, DVec3::new(2.0, 0.0, 0.0));
    assert!((balls[5].position.x - 5.5).abs() < 1e-9);
}

/// Balls dropped onto the floor from small heights never sink into it. Those within
/// the rest tolerance (`rest_distance = 2 |g| dt² ≈ 0.49 mm` at dt = 5 ms) are clamped
/// onto the floor at once and stay exactly there; those dropped from higher bounce
/// elastically for ever, returning to their release height.
#[test]
fn dropped_balls_rest_or_bounce_without_sinking() {
    use glam::DVec3;
    use scene_intersect::collide::room::Ball;

    let r = 0.2;
    let heights = [0.0, 0.0003, 0.002, 0.005];
    let room = Room::new(DVec3::ZERO, DVec3::new(4.0, 4.0, 4.0)).unwrap();
    let balls: Vec<Ball> = heights
        .iter()
        .enumerate()
        .map(|(k, h)| Ball::new(DVec3::new(0.5 + k as f64, 2.0, r + h), DVec3::ZERO, r, 1.0))
        .collect();
    let mut sim = Simulation::new(room, balls, Settings::with_dt(0.005)).unwrap();
    let mut top = [0.0f64; 4];
    for step in 0..2000 {
        let report = sim.step();
        assert!(report.resting >= 2);
        for (k, b) in sim.balls().iter().enumerate() {
            assert!(
                b.position.z >= r - 1e-12,
                "ball {k} sank to {}",
                b.position.z
            );
            if step >= 1800 {
                top[k] = top[k].max(b.position.z - r);
            }
        }
        assert_eq!(sim.balls()[0].position.z, r);
        assert_eq!(sim.balls()[1].position.z, r);
    }
    // Over the last second the bouncing balls still reach their release heights
    // (within the Euler discretisation, |g| dt² ≈ 0.25 mm).
    for k in 2..4 {
        assert!(
            (top[k] - heights[k]).abs() < 0.0005,
            "ball {k}: top {} vs release {}",
            top[k],
            heights[k]
        );
    }
}
