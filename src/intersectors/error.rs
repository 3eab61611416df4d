//! Errors of the query boundary: building intersectors and running the visitor.

use thiserror::Error;

/// What can be wrong with a query. Returned when the intersector is built (bad numbers)
/// or when the visitor runs it (bad frame matrices, unknown root).
#[derive(Debug, Clone, PartialEq, Error)]
pub enum QueryError {
    /// A coordinate, radius, tolerance or plane coefficient is NaN or infinite.
    #[error("the {0} is NaN or infinite; queries need finite numbers")]
    NonFinite(&'static str),
    /// A line segment whose ends coincide.
    #[error("the line segment has zero length (start == end); give two distinct points")]
    ZeroLengthSegment,
    /// A sphere with a negative radius.
    #[error("the sphere radius {0} is negative")]
    NegativeRadius(f64),
    /// A negative picking tolerance.
    #[error("the picking tolerance {0} is negative")]
    NegativeTolerance(f64),
    /// A polytope without planes.
    #[error("the polytope has no planes; give at least one (a, b, c, d) plane")]
    NoPlanes,
    /// A polytope with more planes than the plane mask can track.
    #[error("the polytope has {0} planes; at most 64 are supported")]
    TooManyPlanes(usize),
    /// A plane whose normal (a, b, c) is zero, or so small that its squared length
    /// underflows to zero (it could not be normalized).
    #[error("plane {0} of the polytope has a zero normal (a = b = c = 0) or one too small to normalize (its squared length underflows); scale the plane up")]
    ZeroNormal(usize),
    /// A box with a negative or non-finite half extent.
    #[error("the box half extents must be finite and non-negative")]
    BadBox,
    /// The view / projection / window matrices of the visitor cannot be inverted.
    #[error("the {0} matrices of the visitor are singular or not finite; set a valid view, projection and viewport")]
    SingularFrame(&'static str),
    /// The intersector cannot be used in this coordinate frame.
    #[error("a {0} cannot be given in {1} coordinates (the mapping is projective); give it in MODEL or VIEW coordinates")]
    UnsupportedFrame(&'static str, &'static str),
    /// A viewport with a non-positive or non-finite size.
    #[error("the viewport must have a finite, positive width and height")]
    BadViewport,
    /// The root node is not in the scene graph.
    #[error("the root node is not in this scene graph")]
    UnknownRoot,
}
