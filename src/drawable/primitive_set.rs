//! Primitive sets: which vertices of a geometry form which primitives.

use super::PrimitiveMode;

/// Index data of a [`PrimitiveSet::DrawElements`], in the width the file or renderer has.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Indices {
    /// 8-bit indices.
    U8(Vec<u8>),
    /// 16-bit indices.
    U16(Vec<u16>),
    /// 32-bit indices.
    U32(Vec<u32>),
}

impl Indices {
    /// Number of indices.
    pub fn len(&self) -> usize {
        match self {
            Indices::U8(v) => v.len(),
            Indices::U16(v) => v.len(),
            Indices::U32(v) => v.len(),
        }
    }

    /// True when there are no indices.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `i`-th index widened to `u32`, or `None` past the end.
    #[inline]
    pub fn get(&self, i: usize) -> Option<u32> {
        match self {
            Indices::U8(v) => v.get(i).map(|&x| u32::from(x)),
            Indices::U16(v) => v.get(i).map(|&x| u32::from(x)),
            Indices::U32(v) => v.get(i).copied(),
        }
    }

    /// The largest index, or `None` when empty.
    pub fn max(&self) -> Option<u32> {
        match self {
            Indices::U8(v) => v.iter().max().map(|&x| u32::from(x)),
            Indices::U16(v) => v.iter().max().map(|&x| u32::from(x)),
            Indices::U32(v) => v.iter().max().copied(),
        }
    }
}

/// A primitive set, as in OSG: a mode plus the vertices it draws.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PrimitiveSet {
    /// `count` consecutive vertices starting at `first`.
    DrawArrays {
        /// How the vertices are assembled.
        mode: PrimitiveMode,
        /// First vertex.
        first: u32,
        /// Number of vertices.
        count: u32,
    },
    /// Several consecutive runs starting at `first`, each of its own length, each assembled
    /// on its own (several strips in one set).
    DrawArrayLengths {
        /// How each run is assembled.
        mode: PrimitiveMode,
        /// First vertex of the first run.
        first: u32,
        /// Length of every run, in order.
        lengths: Vec<u32>,
    },
    /// Vertices picked by index.
    DrawElements {
        /// How the indexed vertices are assembled.
        mode: PrimitiveMode,
        /// The indices.
        indices: Indices,
    },
}

impl PrimitiveSet {
    /// Shorthand for [`PrimitiveSet::DrawArrays`].
    pub fn draw_arrays(mode: PrimitiveMode, first: u32, count: u32) -> Self {
        PrimitiveSet::DrawArrays { mode, first, count }
    }

    /// Shorthand for [`PrimitiveSet::DrawElements`] with 32-bit indices.
    pub fn draw_elements_u32(mode: PrimitiveMode, indices: Vec<u32>) -> Self {
        PrimitiveSet::DrawElements {
            mode,
            indices: Indices::U32(indices),
        }
    }

    /// The mode.
    pub fn mode(&self) -> PrimitiveMode {
        match self {
            PrimitiveSet::DrawArrays { mode, .. }
            | PrimitiveSet::DrawArrayLengths { mode, .. }
            | PrimitiveSet::DrawElements { mode, .. } => *mode,
        }
    }

    /// The number of primitives this set contributes to the primitive index.
    pub fn primitive_count(&self) -> usize {
        match self {
            PrimitiveSet::DrawArrays { mode, count, .. } => mode.primitive_count(*count as usize),
            PrimitiveSet::DrawArrayLengths { mode, lengths, .. } => lengths
                .iter()
                .map(|&l| mode.primitive_count(l as usize))
                .sum(),
            PrimitiveSet::DrawElements { mode, indices } => mode.primitive_count(indices.len()),
        }
    }

    /// One past the largest vertex index the set reads (0 when it reads none), computed
    /// without overflow.
    pub fn vertex_index_end(&self) -> u64 {
        match self {
            PrimitiveSet::DrawArrays { count, first, .. } => {
                if *count == 0 {
                    0
                } else {
                    u64::from(*first) + u64::from(*count)
                }
            }
            PrimitiveSet::DrawArrayLengths { first, lengths, .. } => {
                let total: u64 = lengths.iter().map(|&l| u64::from(l)).sum();
                if total == 0 {
                    0
                } else {
                    u64::from(*first) + total
                }
            }
            PrimitiveSet::DrawElements { indices, .. } => {
                indices.max().map_or(0, |m| u64::from(m) + 1)
            }
        }
    }
}
