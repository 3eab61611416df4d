//! Collision toolkit (in progress).
