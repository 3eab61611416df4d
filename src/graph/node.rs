//! Nodes: the interior of the scene graph.

use glam::{DAffine3, DMat4, DVec3};
use smallvec::SmallVec;
use std::sync::OnceLock;

use super::{DrawableId, NodeId};
use crate::bounding::BoundingSphere;

/// Whether a transform's matrix is relative to its parent (the usual case) or replaces
/// the accumulated matrix (OSG's `ABSOLUTE_RF`, used for HUDs and cameras).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ReferenceFrame {
    /// `local_to_world = parent_local_to_world * matrix`.
    #[default]
    Relative,
    /// `local_to_world = matrix`.
    Absolute,
}

/// A transform node's data: an `f64` affine matrix (column vectors: a child point `p`
/// lands at `matrix * p` in the parent frame) and its reference frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Transform {
    /// The matrix, finite.
    pub matrix: DMat4,
    /// Relative or absolute.
    pub reference_frame: ReferenceFrame,
}

impl Transform {
    /// The frame below this transform, given the local-to-world matrix above it: the
    /// child-to-world matrix and its inverse, or `None` for the inverse when the product
    /// is singular or not finite (nothing below can then be intersected). Every traversal
    /// uses this one definition, so plain and accelerated paths agree bit for bit.
    pub fn frame_below(&self, parent_to_world: &DMat4) -> (DMat4, Option<DMat4>) {
        let child_to_world = self.child_to_world(parent_to_world);
        let world_to_child = affine_inverse(&child_to_world);
        let det = child_to_world.determinant();
        let usable = det != 0.0 && det.is_finite() && world_to_child.is_finite();
        (child_to_world, usable.then_some(world_to_child))
    }

    /// The child-to-world matrix of [`frame_below`](Self::frame_below) alone (the same
    /// product).
    #[inline]
    pub fn child_to_world(&self, parent_to_world: &DMat4) -> DMat4 {
        match self.reference_frame {
            ReferenceFrame::Relative => *parent_to_world * self.matrix,
            ReferenceFrame::Absolute => self.matrix,
        }
    }
}

/// The inverse of `m`, an affine matrix (last row `(0, 0, 0, 1)`: every frame of a
/// scene graph is), as OpenSceneGraph's `Matrix::invert` computes it for one: the
/// linear part `L` inverted by cofactors over its determinant, and the translation `t`
/// taken back through it, `(L⁻¹, −L⁻¹·t)`. A general 4×4 inverse mixes the translation
/// into every cofactor, so far from the origin it loses the digits the linear part
/// needs: under a frame 2.2·10^6 units out whose linear part has a condition number of
/// 3.7·10^5, it moved points into the frame and back 0.07 units off, this inverse 10^-5
/// units (the coordinates' rounding at 2·10^6, magnified by the condition number). Not
/// finite when `L` is singular.
fn affine_inverse(m: &DMat4) -> DMat4 {
    DMat4::from(DAffine3::from_mat4(*m).inverse())
}

/// A level-of-detail node's data: per child, the range of eye distances in which it is
/// shown, and the centre distances are measured from.
#[derive(Clone, Debug, PartialEq)]
pub struct Lod {
    /// Centre the eye distance is measured from, in the node's frame; `None` uses the
    /// centre of the node's bounding sphere.
    pub center: Option<DVec3>,
    /// One `[min, max)` range per child, parallel to the children.
    pub ranges: Vec<(f64, f64)>,
}

/// What kind of node this is, with the kind's own data.
#[derive(Clone, Debug, PartialEq)]
pub enum NodeKind {
    /// A plain group of children.
    Group,
    /// A group whose children are placed by a matrix.
    Transform(Transform),
    /// A leaf holding drawables (it has no child nodes).
    Geode {
        /// The drawables, in order.
        drawables: Vec<DrawableId>,
    },
    /// A group showing one child per eye-distance range.
    Lod(Lod),
    /// A group whose children are each on or off.
    Switch {
        /// One flag per child, parallel to the children.
        enabled: Vec<bool>,
    },
}

impl NodeKind {
    /// The kind's name, for messages.
    pub fn name(&self) -> &'static str {
        match self {
            NodeKind::Group => "Group",
            NodeKind::Transform(_) => "Transform",
            NodeKind::Geode { .. } => "Geode",
            NodeKind::Lod(_) => "Lod",
            NodeKind::Switch { .. } => "Switch",
        }
    }
}

/// A node of the scene graph. Nodes live in a [`SceneGraph`](super::SceneGraph) and are
/// named by [`NodeId`]; read them through [`SceneGraph::node`](super::SceneGraph::node),
/// change them through the graph's methods (which keep bounds fresh).
#[derive(Debug)]
pub struct Node {
    pub(crate) name: String,
    pub(crate) node_mask: u32,
    pub(crate) kind: NodeKind,
    pub(crate) children: Vec<NodeId>,
    pub(crate) parents: SmallVec<[NodeId; 2]>,
    pub(crate) bound: OnceLock<BoundingSphere>,
    /// The instance index of the subgraph under this node, when it served as a root.
    pub(crate) index: OnceLock<Box<crate::accel::SceneIndex>>,
    /// How many nodes the graph had created before this one: a scene index that
    /// collected its instances when the graph had created `n` knows that no path it
    /// holds goes through a node of serial `n` or more.
    pub(crate) serial: u64,
}

impl Node {
    pub(crate) fn new(name: impl Into<String>, kind: NodeKind, serial: u64) -> Self {
        Node {
            name: name.into(),
            node_mask: u32::MAX,
            kind,
            children: Vec::new(),
            parents: SmallVec::new(),
            bound: OnceLock::new(),
            index: OnceLock::new(),
            serial,
        }
    }

    /// The node's name (may be empty).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The node mask: the node is visited iff
    /// `traversal_mask & (override_mask | node_mask) != 0`. All bits set by default.
    pub fn node_mask(&self) -> u32 {
        self.node_mask
    }

    /// The node's kind and kind-specific data.
    pub fn kind(&self) -> &NodeKind {
        &self.kind
    }

    /// The child nodes, in order (empty for a geode).
    pub fn children(&self) -> &[NodeId] {
        &self.children
    }

    /// The parents (several when the node is shared).
    pub fn parents(&self) -> &[NodeId] {
        &self.parents
    }

    /// The drawables of a geode (empty for other kinds).
    pub fn drawables(&self) -> &[DrawableId] {
        match &self.kind {
            NodeKind::Geode { drawables } => drawables,
            _ => &[],
        }
    }

    /// The transform data, if this is a transform.
    pub fn transform(&self) -> Option<&Transform> {
        match &self.kind {
            NodeKind::Transform(t) => Some(t),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_affine_inverse_undoes_the_linear_part_and_the_translation() {
        // Scale by (2, 4, 8), then move 10 along x: back is -10 along x, then a half, a
        // quarter and an eighth, all exact in binary.
        let m = DMat4::from_translation(DVec3::new(10.0, 0.0, 0.0))
            * DMat4::from_scale(DVec3::new(2.0, 4.0, 8.0));
        let expected = DMat4::from_scale(DVec3::new(0.5, 0.25, 0.125))
            * DMat4::from_translation(DVec3::new(-10.0, 0.0, 0.0));
        assert_eq!(affine_inverse(&m), expected);
        assert_eq!(expected.w_axis, glam::DVec4::new(-5.0, 0.0, 0.0, 1.0));
        // A turn a quarter about z: its transpose, the translation turned back.
        let turn = DMat4::from_cols_array(&[
            0.0, 1.0, 0.0, 0.0, -1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 3.0, 5.0, 7.0, 1.0,
        ]);
        let back = affine_inverse(&turn);
        assert_eq!(
            back.transform_point3(DVec3::new(3.0, 5.0, 7.0)),
            DVec3::ZERO
        );
        assert_eq!(back.transform_vector3(DVec3::Y), DVec3::X);
        // A flat frame has none.
        let flat = DMat4::from_scale(DVec3::new(1.0, 0.0, 1.0));
        assert!(!affine_inverse(&flat).is_finite());
        let (_, inverse) = Transform {
            matrix: flat,
            reference_frame: ReferenceFrame::Relative,
        }
        .frame_below(&DMat4::IDENTITY);
        assert_eq!(inverse, None);
    }
}
