//! [`path_frame`] and [`PathFrames`]: the local-to-world matrix at the end of a node
//! path and its inverse, computed exactly as the plain traversal computes them, for
//! one path or for many in a row; [`PathProducts`], the same matrix below a given
//! frame.
//!
//! A move of a node high in the graph (a city's root, a district) recomputes the
//! frames of every instance below it. Their paths share most of their nodes (on the
//! generated city_s10, `city / district / block / building / geode` for 71 717
//! instances), and the frame after a prefix depends only on that prefix: computed once
//! for consecutive paths that share it, with the same products in the same order, the
//! frames are the same to the bit.

use glam::DMat4;

use crate::graph::{NodeId, NodeKind, SceneGraph};

/// The frame below a node: its local-to-world matrix and the inverse, or `None` when a
/// transform on the way is singular (the plain traversal skips what lies below).
pub(crate) type Frame = Option<(DMat4, DMat4)>;

/// The local-to-world matrix at the end of `path` and its inverse, computed exactly as
/// the plain traversal does (products in path order, an inverse at each transform), or
/// `None` when a transform on the way makes it singular (or a node is missing).
pub(crate) fn path_frame(scene: &SceneGraph, path: &[NodeId]) -> Frame {
    let mut frame = Some((DMat4::IDENTITY, DMat4::IDENTITY));
    for &n in path {
        frame = frame_after(scene, n, frame?);
    }
    frame
}

/// The local-to-world matrix at the end of `path` when the frame before its first node
/// is `above` (a path's rest after a prefix whose frame was `above`), computed as
/// [`path_frame`] computes it, without the inverses; `None` when a node is missing (the
/// reference the tests hold [`PathProducts`] to).
#[cfg(test)]
pub(crate) fn local_to_world_after(
    scene: &SceneGraph,
    above: DMat4,
    path: &[NodeId],
) -> Option<DMat4> {
    let mut local_to_world = above;
    for &n in path {
        if let NodeKind::Transform(t) = scene.node(n)?.kind() {
            local_to_world = t.child_to_world(&local_to_world);
        }
    }
    Some(local_to_world)
}

/// The frame below node `n`, whose parent's frame is `above`.
#[inline]
fn frame_after(scene: &SceneGraph, n: NodeId, above: (DMat4, DMat4)) -> Frame {
    match scene.node(n)?.kind() {
        NodeKind::Transform(t) => {
            let (child_to_world, world_to_child) = t.frame_below(&above.0);
            Some((child_to_world, world_to_child?))
        }
        _ => Some(above),
    }
}

/// Values computed node by node along paths taken in a row, keeping the value below
/// each node of the last path so that the next one computes only what follows the
/// prefix they share (the graph must not change between calls). The value after a
/// prefix depends only on that prefix, so it is the same to the bit.
#[derive(Debug, Default)]
struct PrefixValues<V> {
    /// The last path, as far as its values were computed.
    path: Vec<NodeId>,
    /// The value below each node of `path`.
    values: Vec<V>,
}

impl<V: Copy> PrefixValues<V> {
    /// The value at the end of `path`: `first` before its first node, then `step` at
    /// each node; `None` at the first node where `step` gives `None`.
    fn value(
        &mut self,
        path: &[NodeId],
        first: V,
        step: impl Fn(NodeId, V) -> Option<V>,
    ) -> Option<V> {
        let shared = (self.path.iter())
            .zip(path)
            .take_while(|(a, b)| a == b)
            .count();
        self.path.truncate(shared);
        self.values.truncate(shared);
        let mut value = shared.checked_sub(1).map_or(first, |k| self.values[k]);
        for &n in &path[shared..] {
            value = step(n, value)?;
            self.path.push(n);
            self.values.push(value);
        }
        Some(value)
    }
}

/// [`path_frame`] for many paths in a row, computing only what follows the prefix a
/// path shares with the one before (one `PathFrames` per refit: the graph must not
/// change between its calls).
#[derive(Debug, Default)]
pub(crate) struct PathFrames(PrefixValues<(DMat4, DMat4)>);

impl PathFrames {
    /// [`path_frame`] of `path` (in a graph unchanged since the last call).
    pub fn frame(&mut self, scene: &SceneGraph, path: &[NodeId]) -> Frame {
        let identity = (DMat4::IDENTITY, DMat4::IDENTITY);
        (self.0).value(path, identity, |n, above| frame_after(scene, n, above))
    }
}

/// The local-to-world matrices at the end of many paths in a row below one frame
/// `above` (each path the rest of a longer one after a prefix whose frame was
/// `above`), computed as [`path_frame`] computes them, without the inverses, and only
/// what follows the prefix a path shares with the one before (the graph must not
/// change between its calls).
#[derive(Debug)]
pub(crate) struct PathProducts {
    above: DMat4,
    products: PrefixValues<DMat4>,
}

impl PathProducts {
    /// Products of paths below the frame `above`.
    pub fn below(above: DMat4) -> Self {
        PathProducts {
            above,
            products: PrefixValues::default(),
        }
    }

    /// The local-to-world matrix at the end of `path` below `self`'s frame; `None`
    /// when a node is missing.
    pub fn local_to_world(&mut self, scene: &SceneGraph, path: &[NodeId]) -> Option<DMat4> {
        (self.products).value(path, self.above, |n, local_to_world| {
            Some(match scene.node(n)?.kind() {
                NodeKind::Transform(t) => t.child_to_world(&local_to_world),
                _ => local_to_world,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::{DQuat, DVec3};

    #[test]
    fn frames_of_paths_in_a_row_equal_each_paths_own() {
        // A tree three transforms deep, two of them at each level, one of them singular,
        // and groups between: every root-to-geode path, in an order that shares
        // prefixes and one that does not.
        let mut scene = SceneGraph::new();
        let root = scene.add_group("root");
        let mut paths = Vec::new();
        let matrix = |k: usize| {
            DMat4::from_scale_rotation_translation(
                DVec3::new(1.0 + 0.1 * k as f64, 0.7, 1.3),
                DQuat::from_rotation_y(0.3 * k as f64),
                DVec3::new(k as f64 * 1e5, -2.5, 0.125 * k as f64),
            )
        };
        for a in 0..2 {
            let ta = scene.add_transform(format!("a{a}"), matrix(a)).unwrap();
            scene.add_child(root, ta).unwrap();
            for b in 0..2 {
                let m = if b == 1 && a == 1 {
                    DMat4::from_scale(DVec3::new(1.0, 0.0, 1.0))
                } else {
                    matrix(3 + b)
                };
                let tb = scene.add_transform(format!("b{a}{b}"), m).unwrap();
                let group = scene.add_group(format!("g{a}{b}"));
                scene.add_child(ta, group).unwrap();
                scene.add_child(group, tb).unwrap();
                for c in 0..2 {
                    let tc = scene
                        .add_transform(format!("c{a}{b}{c}"), matrix(5 + c))
                        .unwrap();
                    let geode = scene.add_geode(format!("geode{a}{b}{c}"));
                    scene.add_child(tb, tc).unwrap();
                    scene.add_child(tc, geode).unwrap();
                    paths.push(vec![root, ta, group, tb, tc, geode]);
                }
            }
        }
        let mut shuffled = paths.clone();
        shuffled.reverse();
        shuffled.swap(1, 5);
        for order in [&paths, &shuffled] {
            let mut frames = PathFrames::default();
            for path in order.iter().chain(order.iter().rev()) {
                let own = path_frame(&scene, path);
                assert_eq!(frames.frame(&scene, path), own, "{path:?}");
                // Under the singular transform there is no frame; elsewhere there is.
                let singular = path.iter().any(|&n| scene.node(n).unwrap().name() == "b11");
                assert_eq!(own.is_none(), singular);
            }
        }
        // The products below a frame, in the same orders, are each path's own.
        let above = matrix(9);
        for order in [&paths, &shuffled] {
            let mut products = PathProducts::below(above);
            for path in order.iter().chain(order.iter().rev()) {
                for rest in [&path[1..], &path[3..], &path[..0]] {
                    let own = local_to_world_after(&scene, above, rest);
                    assert_eq!(products.local_to_world(&scene, rest), own, "{rest:?}");
                }
            }
        }
        // A prefix of a path already seen, and a path of its own (the root alone).
        let mut frames = PathFrames::default();
        frames.frame(&scene, &paths[0]);
        assert_eq!(
            frames.frame(&scene, &paths[0][..3]),
            path_frame(&scene, &paths[0][..3])
        );
        assert_eq!(
            frames.frame(&scene, &[root]),
            Some((DMat4::IDENTITY, DMat4::IDENTITY))
        );
    }
}
