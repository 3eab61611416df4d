//! The one routine that turns any primitive set into point / line / triangle calls.
//!
//! Winding and splitting follow OSG's `TriangleFunctor`: odd triangles of a strip are
//! emitted as `(i, i+2, i+1)`; a fan or polygon as `(0, i-1, i)`; a quad `(a, b, c, d)` as
//! `(a, b, c)` and `(a, c, d)`; a quad-strip step `(i, i+1, i+2, i+3)` as `(i, i+1, i+2)`
//! and `(i+1, i+3, i+2)`. Primitives that read a non-finite vertex are skipped but still
//! counted, so primitive indices never depend on vertex values.

use glam::Vec3;

use super::{PrimitiveFunctor, PrimitiveMode, PrimitiveSet};

/// Feeds every primitive of `set` to `functor`, numbering them from `first_primitive`.
/// Returns the number of primitives the set counts (see [`PrimitiveSet::primitive_count`]).
///
/// Vertex indices past `vertices` make the primitive skipped (never a panic); a
/// [`Geometry`](super::Geometry) rejects such sets when they are added.
pub fn decompose_primitive_set<F: PrimitiveFunctor + ?Sized>(
    vertices: &[Vec3],
    set: &PrimitiveSet,
    first_primitive: u32,
    functor: &mut F,
) -> u32 {
    let mut run = Run {
        vertices,
        functor,
        next_primitive: first_primitive,
    };
    match set {
        PrimitiveSet::DrawArrays { mode, first, count } => {
            let first = *first;
            run.emit(*mode, *count as usize, |i| first.wrapping_add(i as u32));
        }
        PrimitiveSet::DrawArrayLengths {
            mode,
            first,
            lengths,
        } => {
            let mut start = *first;
            for &len in lengths {
                let s = start;
                run.emit(*mode, len as usize, |i| s.wrapping_add(i as u32));
                start = start.wrapping_add(len);
            }
        }
        PrimitiveSet::DrawElements { mode, indices } => {
            run.emit(*mode, indices.len(), |i| indices.get(i).unwrap_or(u32::MAX));
        }
    }
    run.next_primitive.wrapping_sub(first_primitive)
}

struct Run<'a, F: PrimitiveFunctor + ?Sized> {
    vertices: &'a [Vec3],
    functor: &'a mut F,
    next_primitive: u32,
}

impl<F: PrimitiveFunctor + ?Sized> Run<'_, F> {
    #[inline]
    fn vertex(&self, index: u32) -> Option<Vec3> {
        self.vertices
            .get(index as usize)
            .copied()
            .filter(|v| v.is_finite())
    }

    #[inline]
    fn take_primitive_index(&mut self) -> u32 {
        let p = self.next_primitive;
        self.next_primitive = self.next_primitive.wrapping_add(1);
        p
    }

    #[inline]
    fn point(&mut self, i: u32) {
        let p = self.take_primitive_index();
        if let Some(v) = self.vertex(i) {
            self.functor.point(v, i, p);
        }
    }

    #[inline]
    fn line(&mut self, a: u32, b: u32) {
        let p = self.take_primitive_index();
        if let (Some(va), Some(vb)) = (self.vertex(a), self.vertex(b)) {
            self.functor.line([va, vb], [a, b], p);
        }
    }

    #[inline]
    fn triangle_with_index(&mut self, idx: [u32; 3], p: u32) {
        if let (Some(a), Some(b), Some(c)) = (
            self.vertex(idx[0]),
            self.vertex(idx[1]),
            self.vertex(idx[2]),
        ) {
            self.functor.triangle([a, b, c], idx, p);
        }
    }

    #[inline]
    fn triangle(&mut self, idx: [u32; 3]) {
        let p = self.take_primitive_index();
        self.triangle_with_index(idx, p);
    }

    /// Two triangles under one primitive index; skipped whole if any corner is unusable.
    #[inline]
    fn quad(&mut self, t0: [u32; 3], t1: [u32; 3]) {
        let p = self.take_primitive_index();
        let usable = t0
            .iter()
            .chain(t1.iter())
            .all(|&i| self.vertex(i).is_some());
        if usable {
            self.triangle_with_index(t0, p);
            self.triangle_with_index(t1, p);
        }
    }

    fn emit(&mut self, mode: PrimitiveMode, n: usize, idx: impl Fn(usize) -> u32) {
        match mode {
            PrimitiveMode::Points => (0..n).for_each(|i| self.point(idx(i))),
            PrimitiveMode::Lines => {
                for i in (0..n / 2 * 2).step_by(2) {
                    self.line(idx(i), idx(i + 1));
                }
            }
            PrimitiveMode::LineStrip => {
                for i in 1..n {
                    self.line(idx(i - 1), idx(i));
                }
            }
            PrimitiveMode::LineLoop => {
                if n >= 2 {
                    for i in 1..n {
                        self.line(idx(i - 1), idx(i));
                    }
                    self.line(idx(n - 1), idx(0));
                }
            }
            PrimitiveMode::Triangles => {
                for i in (0..n / 3 * 3).step_by(3) {
                    self.triangle([idx(i), idx(i + 1), idx(i + 2)]);
                }
            }
            PrimitiveMode::TriangleStrip => {
                for i in 2..n {
                    if (i - 2) % 2 == 1 {
                        self.triangle([idx(i - 2), idx(i), idx(i - 1)]);
                    } else {
                        self.triangle([idx(i - 2), idx(i - 1), idx(i)]);
                    }
                }
            }
            PrimitiveMode::TriangleFan | PrimitiveMode::Polygon => {
                for i in 2..n {
                    self.triangle([idx(0), idx(i - 1), idx(i)]);
                }
            }
            PrimitiveMode::Quads => {
                for i in (0..n / 4 * 4).step_by(4) {
                    let (a, b, c, d) = (idx(i), idx(i + 1), idx(i + 2), idx(i + 3));
                    self.quad([a, b, c], [a, c, d]);
                }
            }
            PrimitiveMode::QuadStrip => {
                let mut i = 0;
                while i + 3 < n {
                    let (a, b, c, d) = (idx(i), idx(i + 1), idx(i + 2), idx(i + 3));
                    self.quad([a, b, c], [b, d, c]);
                    i += 2;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::drawable::Indices;

    #[derive(Debug, PartialEq)]
    enum Prim {
        P(u32, u32),
        L([u32; 2], u32),
        T([u32; 3], u32),
    }

    #[derive(Default)]
    struct Record(Vec<Prim>);
    impl PrimitiveFunctor for Record {
        fn point(&mut self, _v: Vec3, i: u32, p: u32) {
            self.0.push(Prim::P(i, p));
        }
        fn line(&mut self, _v: [Vec3; 2], i: [u32; 2], p: u32) {
            self.0.push(Prim::L(i, p));
        }
        fn triangle(&mut self, _v: [Vec3; 3], i: [u32; 3], p: u32) {
            self.0.push(Prim::T(i, p));
        }
    }

    fn verts(n: usize) -> Vec<Vec3> {
        (0..n)
            .map(|i| Vec3::new(i as f32, (i * i) as f32, 0.0))
            .collect()
    }

    fn run(set: PrimitiveSet, first: u32) -> (Vec<Prim>, u32) {
        let v = verts(12);
        let mut r = Record::default();
        let count = decompose_primitive_set(&v, &set, first, &mut r);
        (r.0, count)
    }

    use Prim::*;
    use PrimitiveMode as M;

    #[test]
    fn points_one_per_vertex() {
        let (p, n) = run(PrimitiveSet::draw_arrays(M::Points, 2, 3), 10);
        assert_eq!(p, vec![P(2, 10), P(3, 11), P(4, 12)]);
        assert_eq!(n, 3);
    }

    #[test]
    fn lines_pairs_and_odd_leftover() {
        let (p, n) = run(PrimitiveSet::draw_arrays(M::Lines, 0, 5), 0);
        assert_eq!(p, vec![L([0, 1], 0), L([2, 3], 1)]);
        assert_eq!(n, 2);
    }

    #[test]
    fn line_strip_and_loop() {
        let (p, _) = run(PrimitiveSet::draw_arrays(M::LineStrip, 0, 3), 0);
        assert_eq!(p, vec![L([0, 1], 0), L([1, 2], 1)]);
        let (p, n) = run(PrimitiveSet::draw_arrays(M::LineLoop, 0, 3), 0);
        assert_eq!(p, vec![L([0, 1], 0), L([1, 2], 1), L([2, 0], 2)]);
        assert_eq!(n, 3);
        // Too short: a single vertex draws no loop, a single vertex no strip.
        assert_eq!(run(PrimitiveSet::draw_arrays(M::LineLoop, 0, 1), 0).1, 0);
        assert_eq!(run(PrimitiveSet::draw_arrays(M::LineStrip, 0, 1), 0).1, 0);
    }

    #[test]
    fn triangles_ignore_incomplete_tail() {
        let (p, n) = run(PrimitiveSet::draw_arrays(M::Triangles, 0, 8), 0);
        assert_eq!(p, vec![T([0, 1, 2], 0), T([3, 4, 5], 1)]);
        assert_eq!(n, 2);
    }

    #[test]
    fn triangle_strip_flips_odd_triangles() {
        let (p, n) = run(PrimitiveSet::draw_arrays(M::TriangleStrip, 0, 5), 0);
        assert_eq!(p, vec![T([0, 1, 2], 0), T([1, 3, 2], 1), T([2, 3, 4], 2)]);
        assert_eq!(n, 3);
        // A 2-vertex strip emits nothing.
        let (p, n) = run(PrimitiveSet::draw_arrays(M::TriangleStrip, 0, 2), 0);
        assert!(p.is_empty());
        assert_eq!(n, 0);
    }

    #[test]
    fn fan_and_polygon_share_first_vertex() {
        let expect = vec![T([0, 1, 2], 0), T([0, 2, 3], 1), T([0, 3, 4], 2)];
        assert_eq!(
            run(PrimitiveSet::draw_arrays(M::TriangleFan, 0, 5), 0).0,
            expect
        );
        assert_eq!(
            run(PrimitiveSet::draw_arrays(M::Polygon, 0, 5), 0).0,
            expect
        );
    }

    #[test]
    fn quads_are_two_triangles_one_index() {
        let (p, n) = run(PrimitiveSet::draw_arrays(M::Quads, 0, 9), 5);
        assert_eq!(
            p,
            vec![
                T([0, 1, 2], 5),
                T([0, 2, 3], 5),
                T([4, 5, 6], 6),
                T([4, 6, 7], 6)
            ]
        );
        assert_eq!(n, 2);
    }

    #[test]
    fn quad_strip_steps_by_two() {
        let (p, n) = run(PrimitiveSet::draw_arrays(M::QuadStrip, 0, 7), 0);
        assert_eq!(
            p,
            vec![
                T([0, 1, 2], 0),
                T([1, 3, 2], 0),
                T([2, 3, 4], 1),
                T([3, 5, 4], 1)
            ]
        );
        assert_eq!(n, 2);
        assert_eq!(run(PrimitiveSet::draw_arrays(M::QuadStrip, 0, 3), 0).1, 0);
    }

    #[test]
    fn draw_array_lengths_restart_each_run() {
        let set = PrimitiveSet::DrawArrayLengths {
            mode: M::TriangleStrip,
            first: 1,
            lengths: vec![4, 2, 3],
        };
        let (p, n) = run(set, 0);
        // Run 1: vertices 1..5 -> (1,2,3), (2,4,3); run 2: 5..7 -> nothing; run 3: 7..10 -> (7,8,9).
        assert_eq!(p, vec![T([1, 2, 3], 0), T([2, 4, 3], 1), T([7, 8, 9], 2)]);
        assert_eq!(n, 3);
    }

    #[test]
    fn draw_elements_all_widths() {
        for indices in [
            Indices::U8(vec![3, 1, 4, 1, 5]),
            Indices::U16(vec![3, 1, 4, 1, 5]),
            Indices::U32(vec![3, 1, 4, 1, 5]),
        ] {
            let set = PrimitiveSet::DrawElements {
                mode: M::TriangleStrip,
                indices,
            };
            let (p, _) = run(set, 0);
            assert_eq!(p, vec![T([3, 1, 4], 0), T([1, 1, 4], 1), T([4, 1, 5], 2)]);
        }
    }

    #[test]
    fn degenerate_and_unusable_primitives_keep_their_index() {
        let mut v = verts(6);
        v[1] = Vec3::new(f32::NAN, 0.0, 0.0);
        let set = PrimitiveSet::draw_elements_u32(M::Triangles, vec![0, 1, 2, 3, 3, 3, 2, 4, 99]);
        let mut r = Record::default();
        let n = decompose_primitive_set(&v, &set, 0, &mut r);
        // Triangle 0 reads a NaN vertex: skipped; triangle 1 is degenerate: still emitted;
        // triangle 2 reads vertex 99 past the array: skipped. Indices keep counting.
        assert_eq!(r.0, vec![T([3, 3, 3], 1)]);
        assert_eq!(n, 3);
    }
}
