//! [`Candidate`]: a triangle of a world tree that a walk's `f32` filter let through,
//! read (instance, indices, corners) for its exact test. The segment and sphere walks
//! read a batch of them before testing any, so that the reads' cache misses overlap.

/// A triangle read for its exact test, with corners of type `V` (`DVec3` for the
/// segment's test, `Vec3` for the ball's, which moves them to world space itself).
#[derive(Clone, Copy)]
pub(super) struct Candidate<V> {
    /// Its instance's slot (see [`IndexContext::slot`](crate::visitor::IndexContext::slot)).
    pub slot: u32,
    /// Its primitive index in the drawable.
    pub primitive: u32,
    /// Its vertex indices.
    pub indices: [u32; 3],
    /// Its corners in the drawable's frame.
    pub corners: [V; 3],
}
