//! The GL primitive modes a primitive set can draw in.

/// How a run of vertices is assembled into points, lines or triangles (OpenGL's modes,
/// including the legacy QUADS, QUAD_STRIP and POLYGON that OSG still supports).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PrimitiveMode {
    /// One point per vertex.
    Points,
    /// One line per pair of vertices.
    Lines,
    /// A connected polyline: `n - 1` lines.
    LineStrip,
    /// A closed polyline: `n` lines, the last one from the last vertex back to the first.
    LineLoop,
    /// One triangle per three vertices.
    Triangles,
    /// `n - 2` triangles; every odd one reversed to keep the winding (OSG's order).
    TriangleStrip,
    /// `n - 2` triangles around the first vertex.
    TriangleFan,
    /// One quad (two triangles, one primitive index) per four vertices.
    Quads,
    /// `(n - 2) / 2` quads (two triangles each, one primitive index per quad).
    QuadStrip,
    /// One convex polygon, decomposed as a fan: `n - 2` triangles, each its own primitive.
    Polygon,
}

impl PrimitiveMode {
    /// Every mode, in declaration order.
    ///
    /// ```
    /// use scene_intersect::drawable::PrimitiveMode;
    /// assert_eq!(PrimitiveMode::ALL.len(), 10);
    /// let glb: Vec<_> = PrimitiveMode::ALL.into_iter().filter(|m| m.gltf_mode().is_some()).collect();
    /// assert_eq!(glb.len(), 7);
    /// ```
    pub const ALL: [PrimitiveMode; 10] = [
        PrimitiveMode::Points,
        PrimitiveMode::Lines,
        PrimitiveMode::LineStrip,
        PrimitiveMode::LineLoop,
        PrimitiveMode::Triangles,
        PrimitiveMode::TriangleStrip,
        PrimitiveMode::TriangleFan,
        PrimitiveMode::Quads,
        PrimitiveMode::QuadStrip,
        PrimitiveMode::Polygon,
    ];

    /// The glTF `mode` number of this mode, when glTF has one (QUADS, QUAD_STRIP and
    /// POLYGON have none).
    pub fn gltf_mode(self) -> Option<u32> {
        Some(match self {
            PrimitiveMode::Points => 0,
            PrimitiveMode::Lines => 1,
            PrimitiveMode::LineLoop => 2,
            PrimitiveMode::LineStrip => 3,
            PrimitiveMode::Triangles => 4,
            PrimitiveMode::TriangleStrip => 5,
            PrimitiveMode::TriangleFan => 6,
            PrimitiveMode::Quads | PrimitiveMode::QuadStrip | PrimitiveMode::Polygon => {
                return None
            }
        })
    }

    /// Whether this mode assembles triangles (or quads, two triangles each); the others
    /// make only points or lines.
    ///
    /// ```
    /// use scene_intersect::drawable::PrimitiveMode;
    /// assert!(PrimitiveMode::QuadStrip.emits_triangles());
    /// assert!(!PrimitiveMode::LineLoop.emits_triangles());
    /// ```
    pub fn emits_triangles(self) -> bool {
        match self {
            PrimitiveMode::Points
            | PrimitiveMode::Lines
            | PrimitiveMode::LineStrip
            | PrimitiveMode::LineLoop => false,
            PrimitiveMode::Triangles
            | PrimitiveMode::TriangleStrip
            | PrimitiveMode::TriangleFan
            | PrimitiveMode::Quads
            | PrimitiveMode::QuadStrip
            | PrimitiveMode::Polygon => true,
        }
    }

    /// The number of primitives (points, lines, triangles or quads) a run of `n` vertices
    /// makes, counted as the primitive index counts them: degenerate ones included,
    /// leftover vertices that do not complete a primitive ignored.
    ///
    /// ```
    /// use scene_intersect::drawable::PrimitiveMode;
    /// assert_eq!(PrimitiveMode::TriangleStrip.primitive_count(5), 3);
    /// assert_eq!(PrimitiveMode::TriangleStrip.primitive_count(2), 0);
    /// assert_eq!(PrimitiveMode::LineLoop.primitive_count(4), 4);
    /// assert_eq!(PrimitiveMode::QuadStrip.primitive_count(7), 2);
    /// ```
    pub fn primitive_count(self, n: usize) -> usize {
        match self {
            PrimitiveMode::Points => n,
            PrimitiveMode::Lines => n / 2,
            PrimitiveMode::LineStrip => n.saturating_sub(1),
            PrimitiveMode::LineLoop => {
                if n >= 2 {
                    n
                } else {
                    0
                }
            }
            PrimitiveMode::Triangles => n / 3,
            PrimitiveMode::TriangleStrip | PrimitiveMode::TriangleFan | PrimitiveMode::Polygon => {
                n.saturating_sub(2)
            }
            PrimitiveMode::Quads => n / 4,
            PrimitiveMode::QuadStrip => n.saturating_sub(2) / 2,
        }
    }
}
