//! Which kinds of primitive an intersector tests.

/// A set of primitive kinds (points, lines, triangles), as OSG's `PrimitiveMask`.
///
/// ```
/// use scene_intersect::intersectors::PrimitiveMask;
/// let mask = PrimitiveMask::TRIANGLES | PrimitiveMask::LINES;
/// assert!(mask.contains(PrimitiveMask::LINES));
/// assert!(!mask.contains(PrimitiveMask::POINTS));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PrimitiveMask(u8);

impl PrimitiveMask {
    /// Points.
    pub const POINTS: PrimitiveMask = PrimitiveMask(1);
    /// Lines.
    pub const LINES: PrimitiveMask = PrimitiveMask(2);
    /// Triangles (and quads).
    pub const TRIANGLES: PrimitiveMask = PrimitiveMask(4);
    /// Everything.
    pub const ALL: PrimitiveMask = PrimitiveMask(7);
    /// Nothing.
    pub const NONE: PrimitiveMask = PrimitiveMask(0);

    /// True when every kind in `other` is in `self`.
    pub fn contains(self, other: PrimitiveMask) -> bool {
        self.0 & other.0 == other.0
    }

    /// True when some kind in `other` is in `self`.
    ///
    /// ```
    /// use scene_intersect::intersectors::PrimitiveMask;
    /// let loose = PrimitiveMask::POINTS | PrimitiveMask::LINES;
    /// assert!(PrimitiveMask::ALL.intersects(loose));
    /// assert!(!PrimitiveMask::TRIANGLES.intersects(loose));
    /// ```
    pub fn intersects(self, other: PrimitiveMask) -> bool {
        self.0 & other.0 != 0
    }
}

impl Default for PrimitiveMask {
    fn default() -> Self {
        PrimitiveMask::ALL
    }
}

impl std::ops::BitOr for PrimitiveMask {
    type Output = PrimitiveMask;
    fn bitor(self, rhs: PrimitiveMask) -> PrimitiveMask {
        PrimitiveMask(self.0 | rhs.0)
    }
}

/// The kind of a primitive that was hit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PrimitiveKind {
    /// A point.
    Point,
    /// A line.
    Line,
    /// A triangle (or half of a quad).
    Triangle,
}
