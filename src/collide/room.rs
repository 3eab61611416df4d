//! The bouncing-balls room: elastic balls in a closed box with vertical pillars,
//! under gravity, advanced with explicit Euler steps and exact contact times.
//!
//! # The step
//!
//! Each [`Simulation::step`] of length `dt`:
//!
//! 1. **Drift with events.** Velocities are constant during the drift (explicit
//!    Euler: positions move with the velocities from the start of the step).
//!    The earliest contact in the remaining time is found exactly over all
//!    ball–wall ([`time_of_impact_sphere_plane`]), ball–pillar
//!    ([`time_of_impact_sphere_cylinder`]) and ball–ball
//!    ([`time_of_impact_sphere_sphere`]) pairs. All balls advance to that time,
//!    the contact is resolved (walls and pillars: [`reflect_velocity`]; balls:
//!    [`elastic_collision_spheres`]) and the search continues with the rest of the
//!    step. Contacts are only reported while approaching, so a resolved pair is
//!    not found again, and pairs touching at the start of a step are handled at
//!    `t = 0`. A step resolves at most
//!    [`Settings::max_events_per_step`] contacts; if that cap is reached the
//!    balls stay where they are for the rest of the step (never moving into
//!    each other) and the report says `truncated`.
//! 2. **Resting contact.** A ball within [`Settings::rest_distance`] of a floor
//!    (a wall whose normal opposes gravity) whose normal speed is at most
//!    [`Settings::rest_speed`] is *resting*: it is clamped onto the floor (gap
//!    exactly `0`, unless that would push it into another ball), its normal
//!    velocity is zeroed, and the floor's normal force cancels the normal part of
//!    gravity. Without this, a ball at rest would micro-bounce by `|g| dt²` every
//!    step; with it, a resting ball keeps its height exactly and only slides.
//! 3. **Kick.** `v ← v + a dt` with `a` = gravity minus the supported part.
//!
//! # Guarantees
//!
//! After every step no ball overlaps a wall, a pillar or another ball beyond
//! floating-point rounding (see [`Simulation::deepest_penetration`]); contacts
//! are perfectly elastic and the walls frictionless, so the mechanical energy
//! ([`Simulation::total_energy`]) changes only through the Euler kick's
//! discretisation (bounded in flight, zero-mean at bounces) and the tiny losses
//! of resting clamping.
//!
//! Coordinates: `+z` is up, the room is the box `[min, max]`, pillars are
//! vertical cylinders from floor to ceiling (modelled as infinite cylinders,
//! which is exact inside the room).

use glam::{DVec2, DVec3};

use super::cylinder::Cylinder;
use super::moving_sphere::{
    time_of_impact_sphere_cylinder, time_of_impact_sphere_plane, time_of_impact_sphere_sphere,
    Contact, MovingSphere,
};
use super::particle::STANDARD_GRAVITY;
use super::plane::Plane;
use super::response::{elastic_collision_spheres, reflect_velocity};

/// Why a room, a ball set or the settings were rejected.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RoomError {
    /// The room bounds are not finite or not strictly increasing (`min < max`).
    #[error("room bounds must be finite with min < max on every axis")]
    InvalidBounds,
    /// A pillar has a non-finite position, a radius that is not `> 0`, or its
    /// axis outside the room's floor.
    #[error("pillar {0} is invalid (radius must be > 0, axis inside the room)")]
    InvalidPillar(usize),
    /// A ball has a non-finite position or velocity, or a radius or mass that is
    /// not finite and `> 0`.
    #[error("ball {0} is invalid (finite state, radius > 0 and mass > 0 required)")]
    InvalidBall(usize),
    /// A ball starts inside (or through) a wall, a pillar or another ball.
    #[error("ball {ball} starts overlapping {obstacle:?}")]
    Overlap {
        /// The ball.
        ball: usize,
        /// What it overlaps.
        obstacle: Obstacle,
    },
    /// The settings are out of range (`dt` must be finite and `> 0`, gravity
    /// finite, rest tolerances finite and `>= 0`, at least one event per step).
    #[error("invalid simulation settings")]
    InvalidSettings,
    /// Random placement could not fit the requested balls into the room.
    #[error("could not place ball {0} without overlap")]
    CannotPlace(usize),
}

/// A closed box room with vertical pillars.
#[derive(Debug, Clone, PartialEq)]
pub struct Room {
    min: DVec3,
    max: DVec3,
    walls: [Plane; 6],
    pillars: Vec<Cylinder>,
}

impl Room {
    /// The empty box `[min, max]`. Its six walls face inwards (the inside of the
    /// room is their front side), in the order `x = min.x`, `x = max.x`,
    /// `y = min.y`, `y = max.y`, floor `z = min.z`, ceiling `z = max.z`.
    pub fn new(min: DVec3, max: DVec3) -> Result<Self, RoomError> {
        let valid = min.is_finite() && max.is_finite() && min.cmplt(max).all();
        if !valid {
            return Err(RoomError::InvalidBounds);
        }
        Ok(Self::from_valid_bounds(min, max))
    }

    /// The empty room for bounds already known to be valid.
    fn from_valid_bounds(min: DVec3, max: DVec3) -> Self {
        // n·x + d with unit axis normals: d = −n·p.
        let wall = |p: DVec3, n: DVec3| Plane::from_unit_normal(n, -n.dot(p));
        Self {
            min,
            max,
            walls: [
                wall(min, DVec3::X),
                wall(max, -DVec3::X),
                wall(min, DVec3::Y),
                wall(max, -DVec3::Y),
                wall(min, DVec3::Z),
                wall(max, -DVec3::Z),
            ],
            pillars: Vec::new(),
        }
    }

    /// Adds a vertical pillar from floor to ceiling around `(x, y)`.
    /// Its axis must lie strictly inside the floor rectangle and its radius be `> 0`.
    pub fn with_pillar(mut self, center: DVec2, radius: f64) -> Result<Self, RoomError> {
        let inside = center.x > self.min.x
            && center.x < self.max.x
            && center.y > self.min.y
            && center.y < self.max.y;
        let valid = inside && radius > 0.0 && radius.is_finite();
        if !valid {
            return Err(RoomError::InvalidPillar(self.pillars.len()));
        }
        self.pillars
            .push(Cylinder::vertical(center.extend(self.min.z), radius));
        Ok(self)
    }

    /// The demonstration room of `examples/magic_room.rs`: 8 m × 6 m × 4 m with
    /// three pillars (radii 0.4, 0.5 and 0.3 m at (2.5, 2), (5.5, 4) and (5, 1.5)).
    pub fn demo() -> Self {
        let mut room = Self::from_valid_bounds(DVec3::ZERO, DVec3::new(8.0, 6.0, 4.0));
        room.pillars = vec![
            Cylinder::vertical(DVec3::new(2.5, 2.0, 0.0), 0.4),
            Cylinder::vertical(DVec3::new(5.5, 4.0, 0.0), 0.5),
            Cylinder::vertical(DVec3::new(5.0, 1.5, 0.0), 0.3),
        ];
        room
    }

    /// Lower corner.
    pub fn min(&self) -> DVec3 {
        self.min
    }

    /// Upper corner.
    pub fn max(&self) -> DVec3 {
        self.max
    }

    /// The six inward-facing walls (see [`Room::new`] for the order).
    pub fn walls(&self) -> &[Plane; 6] {
        &self.walls
    }

    /// The pillars (vertical cylinders).
    pub fn pillars(&self) -> &[Cylinder] {
        &self.pillars
    }
}

/// A ball: a rigid sphere with a mass.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ball {
    /// Centre.
    pub position: DVec3,
    /// Velocity.
    pub velocity: DVec3,
    /// Radius (`> 0`).
    pub radius: f64,
    /// Mass (`> 0`).
    pub mass: f64,
}

impl Ball {
    /// A ball of the given radius and mass.
    pub fn new(position: DVec3, velocity: DVec3, radius: f64, mass: f64) -> Self {
        Self {
            position,
            velocity,
            radius,
            mass,
        }
    }

    fn moving_sphere(&self) -> MovingSphere {
        MovingSphere::new(self.position, self.radius, self.velocity)
    }

    fn is_valid(&self) -> bool {
        self.position.is_finite()
            && self.velocity.is_finite()
            && self.radius > 0.0
            && self.radius.is_finite()
            && self.mass > 0.0
            && self.mass.is_finite()
    }
}

/// What a ball touches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Obstacle {
    /// A wall, by index into [`Room::walls`].
    Wall(usize),
    /// A pillar, by index into [`Room::pillars`].
    Pillar(usize),
    /// Another ball, by index.
    Ball(usize),
}

/// A contact resolved during a step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContactEvent {
    /// Simulation time of the contact.
    pub time: f64,
    /// The ball (for ball–ball contacts, the lower index).
    pub ball: usize,
    /// What it hit.
    pub obstacle: Obstacle,
    /// Contact point.
    pub point: DVec3,
    /// Unit normal from the obstacle towards `ball`.
    pub normal: DVec3,
}

/// What happened during one step.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StepReport {
    /// The contacts resolved, in time order.
    pub contacts: Vec<ContactEvent>,
    /// Number of balls in resting contact with a floor at the end of the step.
    pub resting: usize,
    /// `true` if the step hit [`Settings::max_events_per_step`] and the balls
    /// were held in place for the rest of the step.
    pub truncated: bool,
}

/// The deepest overlap found by [`Simulation::deepest_penetration`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Penetration {
    /// The ball.
    pub ball: usize,
    /// What it overlaps.
    pub obstacle: Obstacle,
    /// Overlap depth (`> 0`).
    pub depth: f64,
}

/// Simulation parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// Uniform gravitational acceleration.
    pub gravity: DVec3,
    /// Time step.
    pub dt: f64,
    /// Largest normal speed at which a ball near a floor is put to rest.
    pub rest_speed: f64,
    /// Largest gap to a floor at which a slow ball is clamped onto it.
    pub rest_distance: f64,
    /// Cap on the contacts resolved in one step.
    pub max_events_per_step: usize,
}

impl Settings {
    /// Settings for time step `dt` under [`STANDARD_GRAVITY`]: resting below the
    /// speed gravity adds in two steps (`rest_speed = 2 |g| dt`), within the
    /// distance such a ball travels in one step (`rest_distance = rest_speed · dt`),
    /// and at most 1000 contacts per step.
    pub fn with_dt(dt: f64) -> Self {
        let rest_speed = 2.0 * STANDARD_GRAVITY.length() * dt;
        Self {
            gravity: STANDARD_GRAVITY,
            dt,
            rest_speed,
            rest_distance: rest_speed * dt,
            max_events_per_step: 1000,
        }
    }

    fn is_valid(&self) -> bool {
        self.dt > 0.0
            && self.dt.is_finite()
            && self.gravity.is_finite()
            && self.rest_speed >= 0.0
            && self.rest_speed.is_finite()
            && self.rest_distance >= 0.0
            && self.rest_distance.is_finite()
            && self.max_events_per_step > 0
    }
}

impl Default for Settings {
    /// [`Settings::with_dt`] with `dt = 1/200 s`.
    fn default() -> Self {
        Self::with_dt(0.005)
    }
}

/// Small deterministic generator (`SplitMix64`) for reproducible ball sets.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[lo, hi)`.
    fn range(&mut self, lo: f64, hi: f64) -> f64 {
        let unit = (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        lo + (hi - lo) * unit
    }
}

/// Density used by [`Simulation::random`] (kg/m³, a rubber ball).
const BALL_DENSITY: f64 = 1100.0;

/// The running simulation: a room, its balls and the clock.
#[derive(Debug, Clone)]
pub struct Simulation {
    room: Room,
    balls: Vec<Ball>,
    settings: Settings,
    time: f64,
    steps: u64,
}

impl Simulation {
    /// A simulation of `balls` in `room`.
    ///
    /// Fails if the settings or a ball are invalid, or a ball starts overlapping a
    /// wall, a pillar or another ball (touching is allowed).
    pub fn new(room: Room, balls: Vec<Ball>, settings: Settings) -> Result<Self, RoomError> {
        if !settings.is_valid() {
            return Err(RoomError::InvalidSettings);
        }
        if let Some(i) = balls.iter().position(|b| !b.is_valid()) {
            return Err(RoomError::InvalidBall(i));
        }
        let sim = Self {
            room,
            balls,
            settings,
            time: 0.0,
            steps: 0,
        };
        match sim.deepest_penetration() {
            Some(p) => Err(RoomError::Overlap {
                ball: p.ball,
                obstacle: p.obstacle,
            }),
            None => Ok(sim),
        }
    }

    /// `count` balls with radii in `[0.12, 0.3]` m, density 1100 kg/m³, placed at
    /// random without overlap (at least 1 cm from everything) and moving in random
    /// directions at up to 6 m/s. Deterministic for a given `seed`.
    ///
    /// ```
    /// use scene_intersect::collide::room::{Room, Settings, Simulation};
    /// let mut sim = Simulation::random(Room::demo(), 5, 7, Settings::default()).unwrap();
    /// for _ in 0..100 {
    ///     sim.step();
    /// }
    /// assert!(sim.deepest_penetration().is_none());
    /// ```
    pub fn random(
        room: Room,
        count: usize,
        seed: u64,
        settings: Settings,
    ) -> Result<Self, RoomError> {
        const MARGIN: f64 = 0.01;
        let mut rng = SplitMix64(seed);
        let mut balls: Vec<Ball> = Vec::with_capacity(count);
        for index in 0..count {
            let radius = rng.range(0.12, 0.3);
            let mass = BALL_DENSITY * 4.0 / 3.0 * std::f64::consts::PI * radius.powi(3);
            let lo = room.min + DVec3::splat(radius + MARGIN);
            let hi = room.max - DVec3::splat(radius + MARGIN);
            if !lo.cmplt(hi).all() {
                return Err(RoomError::CannotPlace(index));
            }
            let placed = (0..10_000).find_map(|_| {
                let p = DVec3::new(
                    rng.range(lo.x, hi.x),
                    rng.range(lo.y, hi.y),
                    rng.range(lo.z, hi.z),
                );
                let clear_of_pillars = room
                    .pillars
                    .iter()
                    .all(|c| c.distance_to_axis(p) >= c.radius() + radius + MARGIN);
                let clear_of_balls = balls
                    .iter()
                    .all(|b| b.position.distance(p) >= b.radius + radius + MARGIN);
                (clear_of_pillars && clear_of_balls).then_some(p)
            });
            let position = placed.ok_or(RoomError::CannotPlace(index))?;
            let direction = DVec3::new(
                rng.range(-1.0, 1.0),
                rng.range(-1.0, 1.0),
                rng.range(-1.0, 1.0),
            )
            .normalize_or(DVec3::X);
            let velocity = direction * rng.range(0.0, 6.0);
            balls.push(Ball::new(position, velocity, radius, mass));
        }
        Self::new(room, balls, settings)
    }

    /// The room.
    pub fn room(&self) -> &Room {
        &self.room
    }

    /// The balls, in their current state.
    pub fn balls(&self) -> &[Ball] {
        &self.balls
    }

    /// The settings.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Simulated time.
    pub fn time(&self) -> f64 {
        self.time
    }

    /// Number of steps taken.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// Total kinetic energy `Σ ½ m |v|²`.
    pub fn kinetic_energy(&self) -> f64 {
        self.balls
            .iter()
            .map(|b| 0.5 * b.mass * b.velocity.length_squared())
            .sum()
    }

    /// Total potential energy `Σ −m g·(x − room.min)` (zero on the floor corner).
    pub fn potential_energy(&self) -> f64 {
        self.balls
            .iter()
            .map(|b| -b.mass * self.settings.gravity.dot(b.position - self.room.min))
            .sum()
    }

    /// Total mechanical energy (kinetic + potential).
    pub fn total_energy(&self) -> f64 {
        self.kinetic_energy() + self.potential_energy()
    }

    /// The deepest overlap between a ball and a wall, a pillar or another ball,
    /// or `None` if nothing overlaps (touching is not an overlap).
    pub fn deepest_penetration(&self) -> Option<Penetration> {
        let mut deepest: Option<Penetration> = None;
        let mut record = |ball: usize, obstacle: Obstacle, depth: f64| {
            if depth > 0.0 && deepest.is_none_or(|d| depth > d.depth) {
                deepest = Some(Penetration {
                    ball,
                    obstacle,
                    depth,
                });
            }
        };
        for (i, b) in self.balls.iter().enumerate() {
            for (k, wall) in self.room.walls.iter().enumerate() {
                record(
                    i,
                    Obstacle::Wall(k),
                    b.radius - wall.signed_distance(b.position),
                );
            }
            for (k, pillar) in self.room.pillars.iter().enumerate() {
                let gap = pillar.distance_to_axis(b.position) - pillar.radius() - b.radius;
                record(i, Obstacle::Pillar(k), -gap);
            }
            for (j, other) in self.balls.iter().enumerate().skip(i + 1) {
                let gap = b.position.distance(other.position) - b.radius - other.radius;
                record(i, Obstacle::Ball(j), -gap);
            }
        }
        deepest
    }

    /// Advances the simulation by one time step (see the [module docs](self)).
    pub fn step(&mut self) -> StepReport {
        let mut report = StepReport::default();
        let mut remaining = self.settings.dt;
        let mut elapsed = 0.0;
        loop {
            let Some((ball, obstacle, contact)) = self.earliest_contact(remaining) else {
                self.drift(remaining);
                break;
            };
            self.drift(contact.time);
            elapsed += contact.time;
            remaining = (remaining - contact.time).max(0.0);
            self.respond(ball, obstacle, &contact);
            report.contacts.push(ContactEvent {
                time: self.time + elapsed,
                ball,
                obstacle,
                point: contact.point,
                normal: contact.normal,
            });
            if report.contacts.len() >= self.settings.max_events_per_step {
                report.truncated = true;
                break;
            }
        }
        report.resting = self.settle_and_accelerate();
        self.steps += 1;
        self.time = self.steps as f64 * self.settings.dt;
        report
    }

    /// The earliest approaching contact within `max_time`, first found on ties.
    fn earliest_contact(&self, max_time: f64) -> Option<(usize, Obstacle, Contact)> {
        let mut best: Option<(usize, Obstacle, Contact)> = None;
        let mut consider = |ball: usize, obstacle: Obstacle, contact: Option<Contact>| {
            if let Some(c) = contact {
                if best.is_none_or(|(_, _, b)| c.time < b.time) {
                    best = Some((ball, obstacle, c));
                }
            }
        };
        for (i, b) in self.balls.iter().enumerate() {
            let s = b.moving_sphere();
            for (k, wall) in self.room.walls.iter().enumerate() {
                consider(
                    i,
                    Obstacle::Wall(k),
                    time_of_impact_sphere_plane(&s, wall, max_time),
                );
            }
            for (k, pillar) in self.room.pillars.iter().enumerate() {
                consider(
                    i,
                    Obstacle::Pillar(k),
                    time_of_impact_sphere_cylinder(&s, pillar, max_time),
                );
            }
            for (j, other) in self.balls.iter().enumerate().skip(i + 1) {
                consider(
                    i,
                    Obstacle::Ball(j),
                    time_of_impact_sphere_sphere(&s, &other.moving_sphere(), max_time),
                );
            }
        }
        best
    }

    /// Moves every ball along its velocity for `t`.
    fn drift(&mut self, t: f64) {
        if t > 0.0 {
            for b in &mut self.balls {
                b.position += b.velocity * t;
            }
        }
    }

    /// Applies the response of one contact.
    fn respond(&mut self, ball: usize, obstacle: Obstacle, contact: &Contact) {
        match obstacle {
            Obstacle::Wall(_) | Obstacle::Pillar(_) => {
                let b = &mut self.balls[ball];
                b.velocity = reflect_velocity(b.velocity, contact.normal);
            }
            Obstacle::Ball(j) => {
                let (a, b) = (self.balls[ball], self.balls[j]);
                let (va, vb) = elastic_collision_spheres(
                    a.mass,
                    a.velocity,
                    b.mass,
                    b.velocity,
                    contact.normal,
                );
                self.balls[ball].velocity = va;
                self.balls[j].velocity = vb;
            }
        }
    }

    /// Resting-contact handling and the Euler velocity kick; returns the number of
    /// resting balls.
    fn settle_and_accelerate(&mut self) -> usize {
        let g = self.settings.gravity;
        let dt = self.settings.dt;
        let mut resting = 0;
        for i in 0..self.balls.len() {
            let mut acceleration = g;
            let mut supported = false;
            for wall in &self.room.walls {
                let n = wall.normal();
                if n.dot(g) >= 0.0 {
                    continue; // not a floor
                }
                let b = self.balls[i];
                let gap = wall.signed_distance(b.position) - b.radius;
                let vn = b.velocity.dot(n);
                if gap > self.settings.rest_distance || vn.abs() > self.settings.rest_speed {
                    continue;
                }
                let clamped = b.position - gap * n;
                if !self.is_free(i, clamped) {
                    continue; // clamping would push it into a neighbour: let contacts handle it
                }
                let ball = &mut self.balls[i];
                ball.position = clamped;
                ball.velocity -= vn * n;
                acceleration -= acceleration.dot(n) * n;
                supported = true;
            }
            resting += usize::from(supported);
            self.balls[i].velocity += acceleration * dt;
        }
        resting
    }

    /// Would ball `i` at `position` stay clear of every other ball?
    fn is_free(&self, i: usize, position: DVec3) -> bool {
        let r = self.balls[i].radius;
        self.balls
            .iter()
            .enumerate()
            .all(|(j, o)| j == i || position.distance(o.position) >= r + o.radius)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn empty_room() -> Room {
        Room::new(DVec3::ZERO, DVec3::new(10.0, 10.0, 10.0)).unwrap()
    }

    fn still_gravity(dt: f64) -> Settings {
        Settings::with_dt(dt)
    }

    #[test]
    fn invalid_setups_are_rejected() {
        assert_eq!(
            Room::new(DVec3::ONE, DVec3::ONE).unwrap_err(),
            RoomError::InvalidBounds
        );
        assert_eq!(
            empty_room()
                .with_pillar(DVec2::new(11.0, 5.0), 1.0)
                .unwrap_err(),
            RoomError::InvalidPillar(0)
        );
        let ball = Ball::new(DVec3::splat(5.0), DVec3::ZERO, 1.0, 1.0);
        let bad = Ball {
            radius: 0.0,
            ..ball
        };
        assert_eq!(
            Simulation::new(empty_room(), vec![ball, bad], Settings::default()).unwrap_err(),
            RoomError::InvalidBall(1)
        );
        let through_floor = Ball::new(DVec3::new(5.0, 5.0, 0.5), DVec3::ZERO, 1.0, 1.0);
        assert_eq!(
            Simulation::new(empty_room(), vec![through_floor], Settings::default()).unwrap_err(),
            RoomError::Overlap {
                ball: 0,
                obstacle: Obstacle::Wall(4)
            }
        );
        let settings = Settings {
            dt: 0.0,
            ..Settings::default()
        };
        assert_eq!(
            Simulation::new(empty_room(), vec![ball], settings).unwrap_err(),
            RoomError::InvalidSettings
        );
    }

    #[test]
    fn energies_by_hand() {
        // m = 2 kg at height 3 m moving at (0, 3, 0) m/s:
        // KE = ½·2·9 = 9 J, PE = 2·9.80665·3 = 58.8399 J.
        let ball = Ball::new(
            DVec3::new(5.0, 5.0, 3.0),
            DVec3::new(0.0, 3.0, 0.0),
            0.5,
            2.0,
        );
        let sim = Simulation::new(empty_room(), vec![ball], Settings::default()).unwrap();
        assert_eq!(sim.kinetic_energy(), 9.0);
        assert!((sim.potential_energy() - 58.8399).abs() < 1e-12);
        assert!((sim.total_energy() - 67.8399).abs() < 1e-12);
    }

    #[test]
    fn deepest_penetration_by_hand() {
        // Without validation, place balls overlapping: centres 1.5 apart with radii 1 + 1
        // → depth 0.5; ball 0 is 0.8 above the floor with r = 1 → depth 0.2.
        let mut sim = Simulation::new(empty_room(), Vec::new(), Settings::default()).unwrap();
        sim.balls = vec![
            Ball::new(DVec3::new(5.0, 5.0, 0.8), DVec3::ZERO, 1.0, 1.0),
            Ball::new(DVec3::new(6.5, 5.0, 0.8), DVec3::ZERO, 1.0, 1.0),
        ];
        let p = sim.deepest_penetration().unwrap();
        assert_eq!((p.ball, p.obstacle), (0, Obstacle::Ball(1)));
        assert!((p.depth - 0.5).abs() < 1e-15);
    }

    #[test]
    fn free_fall_bounce_by_hand() {
        // No gravity: a ball of radius 1 at z = 3 moving down at 4 m/s with dt = 1.
        // Floor contact when z = 1: t = 0.5; reflected, it rises for 0.5 s → z = 3 again.
        let settings = Settings {
            gravity: DVec3::ZERO,
            ..Settings::with_dt(1.0)
        };
        let ball = Ball::new(
            DVec3::new(5.0, 5.0, 3.0),
            DVec3::new(0.0, 0.0, -4.0),
            1.0,
            1.0,
        );
        let mut sim = Simulation::new(empty_room(), vec![ball], settings).unwrap();
        let report = sim.step();
        assert_eq!(report.contacts.len(), 1);
        let c = report.contacts[0];
        assert_eq!((c.time, c.obstacle), (0.5, Obstacle::Wall(4)));
        assert_eq!(c.point, DVec3::new(5.0, 5.0, 0.0));
        assert_eq!(sim.balls()[0].position, DVec3::new(5.0, 5.0, 3.0));
        assert_eq!(sim.balls()[0].velocity, DVec3::new(0.0, 0.0, 4.0));
    }

    #[test]
    fn two_balls_touching_at_t0_exchange_velocities() {
        // Equal masses touching at t = 0 (centres 2 apart, radii 1), approaching at ±1:
        // resolved at t = 0, velocities swap; after dt = 0.5 they are 3 apart.
        let settings = Settings {
            gravity: DVec3::ZERO,
            ..Settings::with_dt(0.5)
        };
        let a = Ball::new(DVec3::new(4.0, 5.0, 5.0), DVec3::X, 1.0, 2.0);
        let b = Ball::new(DVec3::new(6.0, 5.0, 5.0), -DVec3::X, 1.0, 2.0);
        let mut sim = Simulation::new(empty_room(), vec![a, b], settings).unwrap();
        let report = sim.step();
        assert_eq!(report.contacts.len(), 1);
        assert_eq!(report.contacts[0].time, 0.0);
        assert_eq!(report.contacts[0].obstacle, Obstacle::Ball(1));
        assert_eq!(sim.balls()[0].position, DVec3::new(3.5, 5.0, 5.0));
        assert_eq!(sim.balls()[1].position, DVec3::new(6.5, 5.0, 5.0));
    }

    #[test]
    fn resting_contact_is_exact_and_still() {
        // A ball placed on the floor at rest stays exactly there: the floor carries it.
        let ball = Ball::new(DVec3::new(5.0, 5.0, 0.5), DVec3::ZERO, 0.5, 1.0);
        let mut sim = Simulation::new(empty_room(), vec![ball], still_gravity(0.005)).unwrap();
        for _ in 0..1000 {
            let report = sim.step();
            assert_eq!(report.resting, 1);
            assert!(report.contacts.is_empty());
            assert_eq!(sim.balls()[0].position, DVec3::new(5.0, 5.0, 0.5));
            assert_eq!(sim.balls()[0].velocity, DVec3::ZERO);
        }
    }

    #[test]
    fn dropped_ball_never_enters_the_floor_and_keeps_its_energy() {
        // Dropped from 2 m: it bounces; energy m g h = 9.80665·1.5 (centre 1.5 above rest).
        let ball = Ball::new(DVec3::new(5.0, 5.0, 2.0), DVec3::ZERO, 0.5, 1.0);
        let mut sim = Simulation::new(empty_room(), vec![ball], still_gravity(0.005)).unwrap();
        let e0 = sim.total_energy();
        for _ in 0..4000 {
            sim.step();
            assert!(sim.balls()[0].position.z >= 0.5 - 1e-12);
            assert!(sim.deepest_penetration().is_none_or(|p| p.depth < 1e-12));
        }
        assert!((sim.total_energy() - e0).abs() < 0.02 * e0);
    }

    #[test]
    fn ball_sliding_on_floor_into_a_pillar() {
        // Resting on the floor and sliding at +x towards a pillar at (7, 5) of radius 1.
        // Ball radius 0.5: contact when x = 5.5, i.e. after 1.5 s at 1 m/s; it comes back.
        let room = empty_room().with_pillar(DVec2::new(7.0, 5.0), 1.0).unwrap();
        let ball = Ball::new(DVec3::new(4.0, 5.0, 0.5), DVec3::X, 0.5, 1.0);
        let mut sim = Simulation::new(room, vec![ball], still_gravity(0.01)).unwrap();
        let mut hits = Vec::new();
        for _ in 0..200 {
            hits.extend(sim.step().contacts);
        }
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].obstacle, Obstacle::Pillar(0));
        assert!((hits[0].time - 1.5).abs() < 1e-9);
        assert!((hits[0].point - DVec3::new(6.0, 5.0, 0.5)).length() < 1e-9);
        let b = sim.balls()[0];
        assert_eq!(b.position.z, 0.5);
        // After 2 s: 1.5 s out, 0.5 s back → x = 5.5 − 0.5 = 5.
        assert!((b.position.x - 5.0).abs() < 1e-9);
        assert_eq!(b.velocity, -DVec3::X);
    }

    #[test]
    fn event_cap_holds_balls_in_place() {
        let settings = Settings {
            max_events_per_step: 1,
            gravity: DVec3::ZERO,
            ..Settings::with_dt(1.0)
        };
        // Two contacts in one step: the wall at t = 0.5, then the stop.
        let ball = Ball::new(
            DVec3::new(2.0, 5.0, 5.0),
            DVec3::new(-2.0, 0.0, 0.0),
            1.0,
            1.0,
        );
        let mut sim = Simulation::new(empty_room(), vec![ball], settings).unwrap();
        let report = sim.step();
        assert!(report.truncated);
        assert_eq!(sim.balls()[0].position, DVec3::new(1.0, 5.0, 5.0));
        assert_eq!(sim.balls()[0].velocity, DVec3::new(2.0, 0.0, 0.0));
    }

    #[test]
    fn random_is_deterministic_and_clear() {
        let a = Simulation::random(Room::demo(), 20, 42, Settings::default()).unwrap();
        let b = Simulation::random(Room::demo(), 20, 42, Settings::default()).unwrap();
        assert_eq!(a.balls(), b.balls());
        assert!(a.deepest_penetration().is_none());
        // A 1 m cube cannot hold 100 balls of radius ≥ 0.12 m (volume 100·0.0072 > 1).
        let tiny = Room::new(DVec3::ZERO, DVec3::ONE).unwrap();
        assert!(matches!(
            Simulation::random(tiny, 100, 1, Settings::default()),
            Err(RoomError::CannotPlace(_))
        ));
    }
}
