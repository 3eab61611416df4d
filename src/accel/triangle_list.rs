//! [`TriangleList`] and [`StripOrFan`]: the vertex indices of a geometry that is one set
//! of triangles, read back triangle by triangle from its number.
//!
//! Most drawables loaded from glTF are a single `TRIANGLES` primitive set, where
//! triangle `p` reads entries `3p`, `3p + 1` and `3p + 2` of the set; a single
//! `TRIANGLE_STRIP`, `TRIANGLE_FAN` or `POLYGON` set reads its triangles from its entries
//! just as directly, in the decomposition's windings (see
//! [`decompose_primitive_set`](crate::drawable::decompose_primitive_set)). A
//! [`PrimitiveBvh`](super::PrimitiveBvh) over such a geometry need not copy the vertex
//! indices: it keeps only `p` (4 bytes instead of 16 per triangle) and reads the
//! indices back through these views when it hands a triangle to a functor. The scene
//! index places only `TRIANGLES` sets in its world tree, triangle by triangle (placing
//! the generated cities' ground strips too measured slower: see benches/README.md).

use crate::drawable::{Geometry, Indices, PrimitiveMode, PrimitiveSet};

/// Where the vertex indices of a one-set triangle list are read from (its entries: a
/// [`StripOrFan`] reads its own through the same view).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TriangleList<'g> {
    /// `DrawArrays`: entry `k` is vertex `first + k`, so triangle `p` is vertices
    /// `first + 3p ..= first + 3p + 2`.
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
            [set] if set.mode() == PrimitiveMode::Triangles => Self::entries_of(set),
            _ => None,
        }
    }

    /// The entries of `set`, when it is drawn by `DrawArrays` or `DrawElements`.
    #[inline]
    fn entries_of(set: &'g PrimitiveSet) -> Option<TriangleList<'g>> {
        match set {
            PrimitiveSet::DrawArrays { first, .. } => Some(TriangleList::Arrays(*first)),
            PrimitiveSet::DrawElements { indices, .. } => Some(match indices {
                Indices::U8(v) => TriangleList::U8(v),
                Indices::U16(v) => TriangleList::U16(v),
                Indices::U32(v) => TriangleList::U32(v),
            }),
            PrimitiveSet::DrawArrayLengths { .. } => None,
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
        self.three_from(3 * p as usize)
    }

    /// Entries `k`, `k + 1` and `k + 2`, or `None` when the set is shorter (or the
    /// vertex indices would overflow `u32`).
    #[inline(always)]
    fn three_from(&self, k: usize) -> Option<[u32; 3]> {
        match *self {
            TriangleList::Arrays(first) => {
                let i = first.checked_add(u32::try_from(k).ok()?)?;
                Some([i, i.checked_add(1)?, i.checked_add(2)?])
            }
            TriangleList::U8(v) => v.get(k..k + 3).map(|t| [t[0], t[1], t[2]].map(u32::from)),
            TriangleList::U16(v) => v.get(k..k + 3).map(|t| [t[0], t[1], t[2]].map(u32::from)),
            TriangleList::U32(v) => v.get(k..k + 3).map(|t| [t[0], t[1], t[2]]),
        }
    }
}

/// The triangles of a one-set `TriangleStrip`, `TriangleFan` or `Polygon` geometry, by
/// number: a strip's triangle `p` is entries `p`, `p + 1`, `p + 2`, the last two swapped
/// when `p` is odd; a fan's (or polygon's) is entries `0`, `p + 1`, `p + 2`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct StripOrFan<'g> {
    /// Where the set's entries are read from.
    entries: TriangleList<'g>,
    /// A fan (or polygon) rather than a strip.
    fan: bool,
}

impl<'g> StripOrFan<'g> {
    /// The view of `geometry` when it is exactly one primitive set in `TriangleStrip`,
    /// `TriangleFan` or `Polygon` mode, drawn by `DrawArrays` or `DrawElements`.
    pub(crate) fn of(geometry: &'g Geometry) -> Option<StripOrFan<'g>> {
        let [set] = geometry.primitive_sets() else {
            return None;
        };
        let fan = match set.mode() {
            PrimitiveMode::TriangleStrip => false,
            PrimitiveMode::TriangleFan | PrimitiveMode::Polygon => true,
            _ => return None,
        };
        let entries = TriangleList::entries_of(set)?;
        Some(StripOrFan { entries, fan })
    }

    /// The vertex indices of triangle `p`, or `None` when the set is shorter (or the
    /// indices would overflow `u32`).
    #[inline]
    pub(crate) fn triangle(&self, p: u32) -> Option<[u32; 3]> {
        let [a, b, c] = self.entries.three_from(p as usize)?;
        if self.fan {
            let [hub, _, _] = self.entries.three_from(0)?;
            Some([hub, b, c])
        } else if p % 2 == 1 {
            Some([a, c, b])
        } else {
            Some([a, b, c])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::drawable::PrimitiveFunctor;
    use glam::Vec3;

    fn vertices(n: usize) -> Vec<Vec3> {
        (0..n).map(|i| Vec3::splat(i as f32)).collect()
    }

    fn one_set(set: PrimitiveSet) -> Geometry {
        Geometry::new(vertices(10)).with_primitive_set(set).unwrap()
    }

    /// Every triangle of a one-set geometry with its number: through `for_each` for a
    /// triangle list, else by number through the strip or fan view.
    fn listed(g: &Geometry) -> Vec<(u32, [u32; 3])> {
        let count = g.primitive_count() as u32;
        let mut out = Vec::new();
        match TriangleList::of(g) {
            Some(list) => list.for_each(count, |p, t| out.push((p, t))),
            None => {
                let view = StripOrFan::of(g).unwrap();
                out.extend((0..count).filter_map(|p| Some((p, view.triangle(p)?))));
            }
        }
        out
    }

    #[test]
    fn indexed_and_array_lists_read_their_triangles() {
        let g = one_set(PrimitiveSet::draw_elements_u32(
            PrimitiveMode::Triangles,
            vec![9, 8, 7, 1, 2, 3, 4],
        ));
        let list = TriangleList::of(&g).unwrap();
        assert_eq!(list.triangle(0), Some([9, 8, 7]));
        assert_eq!(list.triangle(1), Some([1, 2, 3]));
        // The trailing index does not make a triangle.
        assert_eq!(list.triangle(2), None);
        let g = one_set(PrimitiveSet::draw_arrays(PrimitiveMode::Triangles, 4, 6));
        let list = TriangleList::of(&g).unwrap();
        assert_eq!(list.triangle(1), Some([7, 8, 9]));
        assert_eq!(TriangleList::Arrays(u32::MAX - 1).triangle(0), None);
        let narrow = one_set(PrimitiveSet::DrawElements {
            mode: PrimitiveMode::Triangles,
            indices: Indices::U16(vec![0, 5, 9]),
        });
        assert_eq!(
            TriangleList::of(&narrow).unwrap().triangle(0),
            Some([0, 5, 9])
        );
    }

    #[test]
    fn strips_alternate_their_winding_and_fans_turn_about_their_first_entry() {
        // Strip entries 9 8 7 6 5: triangles (9 8 7), (8 6 7) (odd: last two swapped),
        // (7 6 5).
        let strip = one_set(PrimitiveSet::DrawElements {
            mode: PrimitiveMode::TriangleStrip,
            indices: Indices::U8(vec![9, 8, 7, 6, 5]),
        });
        assert_eq!(
            listed(&strip),
            vec![(0, [9, 8, 7]), (1, [8, 6, 7]), (2, [7, 6, 5])]
        );
        assert_eq!(TriangleList::of(&strip), None);
        assert_eq!(StripOrFan::of(&strip).unwrap().triangle(3), None);
        let past_u32 = StripOrFan {
            entries: TriangleList::Arrays(u32::MAX - 1),
            fan: false,
        };
        assert_eq!(past_u32.triangle(0), None);
        // Arrays from vertex 2, four vertices: (2 3 4), (3 5 4).
        let strip = one_set(PrimitiveSet::draw_arrays(
            PrimitiveMode::TriangleStrip,
            2,
            4,
        ));
        assert_eq!(listed(&strip), vec![(0, [2, 3, 4]), (1, [3, 5, 4])]);
        // Fan entries 4 0 1 2 (as a fan and as a polygon): (4 0 1), (4 1 2).
        for mode in [PrimitiveMode::TriangleFan, PrimitiveMode::Polygon] {
            let fan = one_set(PrimitiveSet::draw_elements_u32(mode, vec![4, 0, 1, 2]));
            assert_eq!(listed(&fan), vec![(0, [4, 0, 1]), (1, [4, 1, 2])]);
            let fan = one_set(PrimitiveSet::draw_arrays(mode, 6, 4));
            assert_eq!(listed(&fan), vec![(0, [6, 7, 8]), (1, [6, 8, 9])]);
        }
    }

    /// The triangles of every one-set list are the decomposition's, numbered alike.
    #[test]
    fn every_list_reads_the_triangles_the_decomposition_emits() {
        struct Emitted(Vec<(u32, [u32; 3])>);
        impl PrimitiveFunctor for Emitted {
            fn triangle(&mut self, _: [Vec3; 3], indices: [u32; 3], primitive: u32) {
                self.0.push((primitive, indices));
            }
        }
        let entries: Vec<u32> = vec![3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5];
        for mode in [
            PrimitiveMode::Triangles,
            PrimitiveMode::TriangleStrip,
            PrimitiveMode::TriangleFan,
            PrimitiveMode::Polygon,
        ] {
            for n in 0..entries.len() {
                let narrow: Vec<u16> = entries[..n].iter().map(|&i| i as u16).collect();
                let sets = [
                    PrimitiveSet::draw_arrays(mode, 10 - n as u32, n as u32),
                    PrimitiveSet::draw_elements_u32(mode, entries[..n].to_vec()),
                    PrimitiveSet::DrawElements {
                        mode,
                        indices: Indices::U16(narrow),
                    },
                ];
                for set in sets {
                    let g = one_set(set);
                    let mut emitted = Emitted(Vec::new());
                    g.accept_functor(&mut emitted);
                    assert_eq!(listed(&g), emitted.0, "{mode:?}, {n} entries");
                    for &(p, t) in &emitted.0 {
                        let by_number = match TriangleList::of(&g) {
                            Some(list) => list.triangle(p),
                            None => StripOrFan::of(&g).unwrap().triangle(p),
                        };
                        assert_eq!(by_number, Some(t), "{mode:?}, {n} entries");
                    }
                }
            }
        }
    }

    #[test]
    fn other_modes_and_several_sets_have_no_view() {
        for mode in [
            PrimitiveMode::Points,
            PrimitiveMode::Lines,
            PrimitiveMode::LineStrip,
            PrimitiveMode::LineLoop,
            PrimitiveMode::Quads,
            PrimitiveMode::QuadStrip,
        ] {
            let g = one_set(PrimitiveSet::draw_arrays(mode, 0, 8));
            assert_eq!(TriangleList::of(&g), None, "{mode:?}");
            assert_eq!(StripOrFan::of(&g), None, "{mode:?}");
        }
        let runs = one_set(PrimitiveSet::DrawArrayLengths {
            mode: PrimitiveMode::TriangleStrip,
            first: 0,
            lengths: vec![4, 4],
        });
        assert_eq!(StripOrFan::of(&runs), None);
        let two = Geometry::new(vertices(10))
            .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Triangles, 0, 3))
            .unwrap()
            .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Triangles, 3, 3))
            .unwrap();
        assert_eq!(TriangleList::of(&two), None);
        assert_eq!(TriangleList::of(&Geometry::new(vertices(10))), None);
        assert_eq!(StripOrFan::of(&Geometry::new(vertices(10))), None);
        // Strips, fans and polygons are not triangle lists (the world tree's).
        for mode in [
            PrimitiveMode::TriangleStrip,
            PrimitiveMode::TriangleFan,
            PrimitiveMode::Polygon,
        ] {
            let g = one_set(PrimitiveSet::draw_arrays(mode, 0, 8));
            assert_eq!(TriangleList::of(&g), None, "{mode:?}");
        }
    }
}
