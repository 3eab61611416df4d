//! [`TriangleList`]: the vertex indices of a geometry that is one triangle list.
//!
//! Most drawables loaded from glTF are a single `TRIANGLES` primitive set, where
//! triangle `p` reads entries `3p`, `3p + 1` and `3p + 2` of the set. A
//! [`PrimitiveBvh`](super::PrimitiveBvh) over such a geometry need not copy the vertex
//! indices: it keeps only `p` (4 bytes instead of 16 per triangle) and reads the
//! indices back through this view when it hands a triangle to a functor.

use crate::drawable::{Geometry, Indices, PrimitiveMode, PrimitiveSet};

/// Where the vertex indices of a one-set triangle list are read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TriangleList<'g> {
    /// `DrawArrays`: triangle `p` is vertices `first + 3p ..= first + 3p + 2`.
    Arrays(u32),
    /// `DrawElements` with 8-bit indices.
    U8(&'g [u8]),
    /// `DrawElements` with 16-bit indices.
    U16(&'g [u16]),
    /// `DrawElements` with 32-bit indices.
    U32(&'g [u32]),
}

impl<'g> TriangleList<'g> {
    /// The view of `geometry` when it is exactly one primitive set in `Triangles` mode.
    pub(crate) fn of(geometry: &'g Geometry) -> Option<TriangleList<'g>> {
        match geometry.primitive_sets() {
            [PrimitiveSet::DrawArrays {
                mode: PrimitiveMode::Triangles,
                first,
                ..
            }] => Some(TriangleList::Arrays(*first)),
            [PrimitiveSet::DrawElements {
                mode: PrimitiveMode::Triangles,
                indices,
            }] => Some(match indices {
                Indices::U8(v) => TriangleList::U8(v),
                Indices::U16(v) => TriangleList::U16(v),
                Indices::U32(v) => TriangleList::U32(v),
            }),
            _ => None,
        }
    }

    /// Calls `f` with every whole triangle of the list, in order: its number and vertex
    /// indices (one loop per index type, where [`triangle`](Self::triangle) decides the
    /// type per call). `count` bounds the triangles of an array list.
    #[inline]
    pub(crate) fn for_each(&self, count: u32, mut f: impl FnMut(u32, [u32; 3])) {
        match *self {
            TriangleList::Arrays(_) => {
                for p in 0..count {
                    if let Some(t) = self.triangle(p) {
                        f(p, t);
                    }
                }
            }
            TriangleList::U8(v) => {
                for (p, t) in v.chunks_exact(3).enumerate() {
                    f(p as u32, [t[0], t[1], t[2]].map(u32::from));
                }
            }
            TriangleList::U16(v) => {
                for (p, t) in v.chunks_exact(3).enumerate() {
                    f(p as u32, [t[0], t[1], t[2]].map(u32::from));
                }
            }
            TriangleList::U32(v) => {
                for (p, t) in v.chunks_exact(3).enumerate() {
                    f(p as u32, [t[0], t[1], t[2]]);
                }
            }
        }
    }

    /// The vertex indices of triangle `p`, or `None` when the list is shorter (or the
    /// indices would overflow `u32`).
    #[inline]
    pub(crate) fn triangle(&self, p: u32) -> Option<[u32; 3]> {
        let k = 3 * p as usize;
        match *self {
            TriangleList::Arrays(first) => {
                let i = first.checked_add(p.checked_mul(3)?)?;
                Some([i, i.checked_add(1)?, i.checked_add(2)?])
            }
            TriangleList::U8(v) => v.get(k..k + 3).map(|t| [t[0], t[1], t[2]].map(u32::from)),
            TriangleList::U16(v) => v.get(k..k + 3).map(|t| [t[0], t[1], t[2]].map(u32::from)),
            TriangleList::U32(v) => v.get(k..k + 3).map(|t| [t[0], t[1], t[2]]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;

    fn vertices(n: usize) -> Vec<Vec3> {
        (0..n).map(|i| Vec3::splat(i as f32)).collect()
    }

    #[test]
    fn indexed_and_array_lists_read_their_triangles() {
        let g = Geometry::new(vertices(10))
            .with_primitive_set(PrimitiveSet::draw_elements_u32(
                PrimitiveMode::Triangles,
                vec![9, 8, 7, 1, 2, 3, 4],
            ))
            .unwrap();
        let list = TriangleList::of(&g).unwrap();
        assert_eq!(list.triangle(0), Some([9, 8, 7]));
        assert_eq!(list.triangle(1), Some([1, 2, 3]));
        // The trailing index does not make a triangle.
        assert_eq!(list.triangle(2), None);
        let g = Geometry::new(vertices(10))
            .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Triangles, 4, 6))
            .unwrap();
        let list = TriangleList::of(&g).unwrap();
        assert_eq!(list.triangle(1), Some([7, 8, 9]));
        assert_eq!(TriangleList::Arrays(u32::MAX - 1).triangle(0), None);
        let narrow = Geometry::new(vertices(10))
            .with_primitive_set(PrimitiveSet::DrawElements {
                mode: PrimitiveMode::Triangles,
                indices: Indices::U16(vec![0, 5, 9]),
            })
            .unwrap();
        assert_eq!(
            TriangleList::of(&narrow).unwrap().triangle(0),
            Some([0, 5, 9])
        );
    }

    #[test]
    fn other_modes_and_several_sets_are_not_lists() {
        let strip = Geometry::new(vertices(10))
            .with_primitive_set(PrimitiveSet::draw_arrays(
                PrimitiveMode::TriangleStrip,
                0,
                6,
            ))
            .unwrap();
        assert_eq!(TriangleList::of(&strip), None);
        let two = Geometry::new(vertices(10))
            .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Triangles, 0, 3))
            .unwrap()
            .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Triangles, 3, 3))
            .unwrap();
        assert_eq!(TriangleList::of(&two), None);
        assert_eq!(TriangleList::of(&Geometry::new(vertices(3))), None);
    }
}
