//! [`IntersectionVisitor`]: walks the scene graph and feeds an intersector.

use glam::{DMat4, DVec3};

use super::met_instances::MetInstances;
use super::{DrawableContext, FrameContext, IndexContext, Intersector, Viewport};
use crate::accel::{
    Aabb, Aabb4, Gate, Instance, OrderedVisitor, SceneIndex, WideBvh, WideEntries, MAX_LEAF_ITEMS,
};
use crate::graph::{Lod, Node, NodeId, NodeKind, SceneGraph};
use crate::intersectors::QueryError;

/// Which children of a [`NodeKind::Lod`] the visitor enters.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum LodSelection {
    /// The most detailed child only: the one whose range starts nearest (OSG's
    /// `USE_HIGHEST_LEVEL_OF_DETAIL`); ties go to the first.
    #[default]
    HighestDetail,
    /// The children whose `[min, max)` range holds the distance from this world-space eye
    /// point to the LOD centre, as a renderer would show them.
    EyePoint(DVec3),
}

/// Walks a scene graph depth first and runs an [`Intersector`] against it, as OSG's
/// `osgUtil::IntersectionVisitor` does.
///
/// * Node masks: a node is entered iff `traversal_mask & (override_mask | node_mask) != 0`
///   (so a vehicle excludes its own subtree by giving it a bit the query's traversal mask
///   lacks).
/// * Culling: a node whose bounding sphere, or a drawable whose box, the query misses is
///   skipped.
/// * Transforms: the root query is re-expressed in each transform's local frame (cloned
///   from the root, never accumulated), and the node path and local-to-world matrix are
///   tracked for the hits. A subtree under a singular transform (a zero scale) is not
///   intersected: it has no volume and no local frame.
/// * Switch: enabled children only. LOD: see [`LodSelection`].
/// * Frames: intersectors in VIEW, PROJECTION or WINDOW coordinates are mapped through
///   the visitor's view, projection and viewport (missing ones count as identity).
///
/// A visitor keeps its buffers between queries: reuse one to run many.
///
/// ```
/// use scene_intersect::prelude::*;
/// use glam::{DVec3, Vec3};
///
/// let mut scene = SceneGraph::new();
/// let root = scene.add_group("root");
/// let geode = scene.add_geode("ground");
/// let quad = Geometry::new(vec![
///     Vec3::new(-1.0, 0.0, -1.0), Vec3::new(1.0, 0.0, -1.0),
///     Vec3::new(1.0, 0.0, 1.0), Vec3::new(-1.0, 0.0, 1.0),
/// ]).with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Quads, 0, 4))?;
/// let d = scene.add_drawable("quad", quad);
/// scene.add_drawable_to_geode(geode, d)?;
/// scene.add_child(root, geode)?;
///
/// let mut picker = LineSegmentIntersector::new(DVec3::new(0.2, 5.0, 0.3), DVec3::new(0.2, -5.0, 0.3))?;
/// let mut visitor = IntersectionVisitor::new();
/// visitor.apply(&scene, root, &mut picker)?;
/// let hit = &picker.intersections()[0];
/// assert_eq!(hit.ratio, 0.5);
/// assert_eq!(hit.world_point, DVec3::new(0.2, 0.0, 0.3));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct IntersectionVisitor {
    traversal_mask: u32,
    override_mask: u32,
    lod_selection: LodSelection,
    frames: FrameContext,
    use_acceleration: bool,
    node_path: Vec<NodeId>,
    /// For the scene-index walk: the instances met by the current query, each with its
    /// position in that query's list of localized queries (kept to reuse the buffer).
    met_instances: MetInstances,
}

impl Default for IntersectionVisitor {
    fn default() -> Self {
        Self::new()
    }
}

impl IntersectionVisitor {
    /// A visitor entering every node (`traversal_mask` all ones, `override_mask` 0),
    /// highest LOD, no camera.
    pub fn new() -> Self {
        IntersectionVisitor {
            traversal_mask: u32::MAX,
            override_mask: 0,
            lod_selection: LodSelection::HighestDetail,
            frames: FrameContext::default(),
            use_acceleration: true,
            node_path: Vec::new(),
            met_instances: MetInstances::default(),
        }
    }

    /// The traversal mask.
    pub fn traversal_mask(&self) -> u32 {
        self.traversal_mask
    }

    /// Sets the traversal mask: nodes whose `node_mask` shares no bit with it (and with
    /// no override) are skipped with their subtree.
    pub fn set_traversal_mask(&mut self, mask: u32) -> &mut Self {
        self.traversal_mask = mask;
        self
    }

    /// The override mask.
    pub fn override_mask(&self) -> u32 {
        self.override_mask
    }

    /// Sets the override mask, OR-ed into every node's mask before the test.
    pub fn set_override_mask(&mut self, mask: u32) -> &mut Self {
        self.override_mask = mask;
        self
    }

    /// The LOD selection.
    pub fn lod_selection(&self) -> LodSelection {
        self.lod_selection
    }

    /// Sets how LOD children are chosen.
    pub fn set_lod_selection(&mut self, selection: LodSelection) -> &mut Self {
        self.lod_selection = selection;
        self
    }

    /// Sets the view matrix (world to eye) used by VIEW, PROJECTION and WINDOW queries.
    pub fn set_view_matrix(&mut self, view: DMat4) -> &mut Self {
        self.frames.view = Some(view);
        self
    }

    /// Sets the projection matrix (eye to clip) used by PROJECTION and WINDOW queries.
    pub fn set_projection_matrix(&mut self, projection: DMat4) -> &mut Self {
        self.frames.projection = Some(projection);
        self
    }

    /// Sets the viewport used by WINDOW queries.
    pub fn set_viewport(&mut self, viewport: Viewport) -> &mut Self {
        self.frames.viewport = Some(viewport);
        self
    }

    /// Whether drawables' acceleration structures are used (default: yes; the answers
    /// are identical either way, only the speed differs, but for which hit
    /// [`IntersectionLimit::One`](crate::visitor::IntersectionLimit::One) keeps when
    /// there are several).
    pub fn use_acceleration(&self) -> bool {
        self.use_acceleration
    }

    /// Turns the use of acceleration structures on or off (OSG's
    /// `setUseKdTreeWhenAvailable`).
    pub fn set_use_acceleration(&mut self, on: bool) -> &mut Self {
        self.use_acceleration = on;
        self
    }

    /// The camera matrices.
    pub fn frames(&self) -> &FrameContext {
        &self.frames
    }

    /// Forgets the camera and restores the default masks and LOD selection, keeping the
    /// allocated buffers.
    pub fn reset(&mut self) {
        let mut path = std::mem::take(&mut self.node_path);
        path.clear();
        // Every query starts with no instance met: the table needs no clearing.
        let met = std::mem::take(&mut self.met_instances);
        *self = IntersectionVisitor {
            node_path: path,
            met_instances: met,
            ..IntersectionVisitor::new()
        };
    }

    /// Runs `intersector` over the subgraph under `root`; the hits are then in the
    /// intersector. Hits found by an earlier run are cleared first.
    pub fn apply<I: Intersector>(
        &mut self,
        scene: &SceneGraph,
        root: NodeId,
        intersector: &mut I,
    ) -> Result<(), QueryError> {
        if scene.node(root).is_none() {
            return Err(QueryError::UnknownRoot);
        }
        intersector.begin(&self.frames)?;
        if self.use_acceleration {
            if let Some(index) = scene.scene_index(root) {
                let mut met = std::mem::take(&mut self.met_instances);
                met.start(index.instances().len());
                let walked = {
                    let mut context = IndexContext::new(self, scene, index, &mut met);
                    intersector.intersect_index(&mut context)
                };
                self.met_instances = met;
                // The intersector walked the world tree: the instances detached from it
                // by moves and edits are left. Otherwise every instance is visited
                // whole, those still in the world tree from the tree over the instances.
                if !walked {
                    self.visit_instances(scene, index, InstanceItems::Attached, intersector);
                }
                let detached = InstanceItems::Detached(index.detached());
                self.visit_instances(scene, index, detached, intersector);
                intersector.end();
                return Ok(());
            }
        }
        self.node_path.clear();
        let identity = DMat4::IDENTITY;
        let local = intersector.localize(&identity, &identity);
        self.visit(scene, root, intersector, &local, &identity, &identity);
        intersector.end();
        Ok(())
    }

    /// Whether a node passes the mask test.
    #[inline]
    fn mask_allows(&self, node: &Node) -> bool {
        self.traversal_mask & (self.override_mask | node.node_mask()) != 0
    }

    /// The LOD children this visitor enters, as positions.
    fn lod_selects(
        &self,
        lod: &Lod,
        position: usize,
        center: DVec3,
        local_to_world: &DMat4,
    ) -> bool {
        match self.lod_selection {
            LodSelection::HighestDetail => {
                lod.ranges
                    .iter()
                    .enumerate()
                    .min_by(|a, b| a.1 .0.total_cmp(&b.1 .0))
                    .map(|(i, _)| i)
                    == Some(position)
            }
            LodSelection::EyePoint(eye) => {
                let distance = (local_to_world.transform_point3(center) - eye).length();
                lod.ranges
                    .get(position)
                    .is_some_and(|r| r.0 <= distance && distance < r.1)
            }
        }
    }

    /// Whether the plain traversal would reach this instance: every node on its path
    /// passes the masks, every switch gate is on, every LOD gate is selected.
    /// `masks_unchanged` (no mask set since the index was built) lets a path whose masks
    /// were all ones skip looking at its nodes.
    ///
    /// The common case (masks unchanged and all ones, no gate) is decided here, inlined
    /// into every visit; the rest, out of line. (Left to the compiler, the whole was
    /// inlined or not by the size of code around it: taken out of line by an unrelated
    /// change, it cost 1 % of a nearest segment's instructions on the city.)
    #[inline(always)]
    pub(crate) fn reaches(
        &self,
        scene: &SceneGraph,
        instance: &Instance,
        masks_unchanged: bool,
    ) -> bool {
        if masks_unchanged && instance.default_masks && instance.gates.is_empty() {
            // Every node mask on the path is all ones: `mask_allows` is
            // `traversal_mask & (override_mask | !0) != 0` at each.
            return self.traversal_mask != 0;
        }
        self.reaches_by_path(scene, instance)
    }

    /// [`reaches`](Self::reaches) by the masks on the instance's path and its gates.
    #[inline(never)]
    fn reaches_by_path(&self, scene: &SceneGraph, instance: &Instance) -> bool {
        let masks_pass = instance
            .path
            .iter()
            .all(|&n| scene.node(n).is_some_and(|node| self.mask_allows(node)));
        masks_pass
            && instance.gates.iter().all(|gate| match gate {
                Gate::Switch { node, position } => {
                    scene.node(*node).is_some_and(|n| match n.kind() {
                        NodeKind::Switch { enabled } => {
                            enabled.get(*position).copied().unwrap_or(false)
                        }
                        _ => false,
                    })
                }
                Gate::Lod {
                    node,
                    position,
                    local_to_world,
                } => scene.node(*node).is_some_and(|n| match n.kind() {
                    NodeKind::Lod(lod) => {
                        let center = lod
                            .center
                            .or_else(|| scene.node_bound(*node).map(|b| b.center))
                            .unwrap_or(DVec3::ZERO);
                        self.lod_selects(lod, *position, center, local_to_world)
                    }
                    _ => false,
                }),
            })
    }

    /// Visits instances of the scene index whole, each through its drawable: those still
    /// in the world tree (walking the instance tree), or the ones detached from it
    /// (walking their own tree), nearest first for the intersectors that order their
    /// boxes. An instance is gated as the plain traversal would reach it.
    fn visit_instances<I: Intersector>(
        &self,
        scene: &SceneGraph,
        index: &SceneIndex,
        items: InstanceItems<'_>,
        intersector: &mut I,
    ) {
        struct Walk<'a, I: Intersector> {
            visitor: &'a IntersectionVisitor,
            scene: &'a SceneGraph,
            instances: &'a [Instance],
            items: InstanceItems<'a>,
            intersector: &'a mut I,
            /// Whether the walk is nearest first.
            ordered: bool,
            /// Whether no node mask changed since the index was built.
            masks_unchanged: bool,
        }
        impl<I: Intersector> Walk<'_, I> {
            /// Instance `k`'s position and world box, for item `item`. A detached
            /// instance met in the instance tree gets an empty box, so that it is
            /// skipped there: it is visited from the tree of detached instances, and the
            /// instance tree is no longer refitted after it.
            #[inline(always)]
            fn get(&self, item: usize) -> (u32, &Aabb) {
                let k = match self.items {
                    InstanceItems::Attached => item as u32,
                    InstanceItems::Detached(list) => list[item],
                };
                let instance = &self.instances[k as usize];
                let skipped = matches!(self.items, InstanceItems::Attached) && instance.detached;
                let world_box = if skipped {
                    &Aabb::EMPTY
                } else {
                    &instance.world_box
                };
                (k, world_box)
            }

            /// Where the query enters an item's world box, or `None` when it misses it or
            /// the box is empty (the box of an instance under a singular transform, which
            /// the plain traversal never reaches).
            #[inline(always)]
            fn enter_item(&self, world_box: &Aabb) -> Option<f64> {
                if world_box.min.x > world_box.max.x {
                    return None;
                }
                self.intersector.enter_world_box(world_box)
            }

            /// Visits instance `k`, whose world box the query enters at `t`, unless `t`
            /// is past the query's limit.
            fn visit(&mut self, k: u32, t: f64) {
                if t > self.intersector.world_limit() {
                    return;
                }
                visit_whole(
                    self.visitor,
                    self.scene,
                    &self.instances[k as usize],
                    self.masks_unchanged,
                    self.intersector,
                );
            }
        }
        impl<I: Intersector> OrderedVisitor for Walk<'_, I> {
            fn entry(&mut self, bounds: &Aabb) -> Option<f64> {
                self.intersector.enter_world_box(bounds)
            }
            fn entries(&mut self, boxes: &Aabb4) -> WideEntries {
                self.intersector.enter_world_boxes(boxes)
            }
            fn limit(&self) -> f64 {
                self.intersector.world_limit()
            }
            fn leaf(&mut self, items: std::ops::Range<usize>) -> bool {
                if !self.ordered || items.len() < 2 || items.len() > MAX_LEAF_ITEMS {
                    for item in items {
                        if self.intersector.reached_limit() {
                            return false;
                        }
                        let (k, world_box) = self.get(item);
                        if let Some(t) = self.enter_item(world_box) {
                            self.visit(k, t);
                        }
                    }
                    return !self.intersector.reached_limit();
                }
                // Nearest first within the leaf too, so a hit in a near item can spare
                // the items past it (leaves `Bvh::build` makes hold at most
                // `MAX_LEAF_ITEMS`).
                let mut entered = [(0.0f64, 0u32); MAX_LEAF_ITEMS];
                let mut count = 0;
                for item in items {
                    let (k, world_box) = self.get(item);
                    let Some(t) = self.enter_item(world_box) else {
                        continue;
                    };
                    // Insertion by entry, after equal ones (item order breaks ties).
                    let mut at = count;
                    while at > 0 && entered[at - 1].0 > t {
                        entered[at] = entered[at - 1];
                        at -= 1;
                    }
                    entered[at] = (t, k);
                    count += 1;
                }
                for &(t, k) in &entered[..count] {
                    if self.intersector.reached_limit() {
                        return false;
                    }
                    self.visit(k, t);
                }
                !self.intersector.reached_limit()
            }
        }
        let tree: &WideBvh = match items {
            InstanceItems::Attached => index.bvh(),
            InstanceItems::Detached(_) => index.detached_bvh(),
        };
        if tree.nodes().is_empty() {
            return;
        }
        intersector.begin_world_boxes(&tree.bounds());
        let ordered = intersector.orders_world_boxes();
        let mut walk = Walk {
            visitor: self,
            scene,
            instances: index.instances(),
            items,
            intersector,
            ordered,
            masks_unchanged: index.masks_unchanged(scene),
        };
        if ordered {
            tree.for_each_leaf_ordered(&mut walk);
        } else {
            tree.for_each_leaf_depth_first(&mut walk);
        }
    }

    fn visit<I: Intersector>(
        &mut self,
        scene: &SceneGraph,
        id: NodeId,
        intersector: &mut I,
        local: &I::Local,
        local_to_world: &DMat4,
        world_to_local: &DMat4,
    ) {
        if intersector.reached_limit() {
            return;
        }
        let Some(node) = scene.node(id) else { return };
        if !self.mask_allows(node) {
            return;
        }
        let Some(bound) = scene.node_bound(id) else {
            return;
        };
        if !intersector.enter_node(local, &bound) {
            return;
        }
        self.node_path.push(id);
        match node.kind() {
            NodeKind::Group => {
                for &child in node.children() {
                    self.visit(
                        scene,
                        child,
                        intersector,
                        local,
                        local_to_world,
                        world_to_local,
                    );
                }
            }
            NodeKind::Switch { enabled } => {
                for (&child, &on) in node.children().iter().zip(enabled) {
                    if on {
                        self.visit(
                            scene,
                            child,
                            intersector,
                            local,
                            local_to_world,
                            world_to_local,
                        );
                    }
                }
            }
            NodeKind::Lod(lod) => {
                let center = lod.center.unwrap_or(bound.center);
                for (position, &child) in node.children().iter().enumerate() {
                    if self.lod_selects(lod, position, center, local_to_world) {
                        self.visit(
                            scene,
                            child,
                            intersector,
                            local,
                            local_to_world,
                            world_to_local,
                        );
                    }
                }
            }
            NodeKind::Transform(t) => {
                if let (child_to_world, Some(world_to_child)) = t.frame_below(local_to_world) {
                    let child_local = intersector.localize(&child_to_world, &world_to_child);
                    for &child in node.children() {
                        self.visit(
                            scene,
                            child,
                            intersector,
                            &child_local,
                            &child_to_world,
                            &world_to_child,
                        );
                    }
                }
            }
            NodeKind::Geode { drawables } => {
                for &d in drawables {
                    if intersector.reached_limit() {
                        break;
                    }
                    let (Some(drawable), Some(bound)) =
                        (scene.drawable(d), scene.drawable_bound(d))
                    else {
                        continue;
                    };
                    if !intersector.enter_drawable(local, &bound) {
                        continue;
                    }
                    let context = DrawableContext {
                        scene,
                        node_path: &self.node_path,
                        drawable: d,
                        local_to_world,
                        world_to_local,
                        use_acceleration: self.use_acceleration,
                    };
                    intersector.intersect(local, &context, drawable);
                }
            }
        }
        self.node_path.pop();
    }
}

/// Which instances [`IntersectionVisitor::visit_instances`] visits.
#[derive(Clone, Copy)]
enum InstanceItems<'a> {
    /// The instances not detached from the world tree, by the instance tree (whose leaf
    /// order is the instances' order; it also holds the detached ones, skipped).
    Attached,
    /// The instances detached from the world tree, by their own tree (in its leaf
    /// order).
    Detached(&'a [u32]),
}

/// Visits one instance whole, as the plain traversal would visit its drawable: unless a
/// mask, switch or LOD keeps the traversal from it, the query is moved to its frame,
/// its drawable's box tested (unless the intersector's test only culls, which the world
/// box already did, or a geometry's hits would pass it anyway:
/// [`Intersector::drawable_test_follows_from_hits`]) and its primitives intersected. A
/// geometry of points and lines only is skipped when the intersector cannot hit those
/// ([`Intersector::hits_points_or_lines`]): the plain traversal finds nothing there
/// either.
pub(crate) fn visit_whole<I: Intersector>(
    visitor: &IntersectionVisitor,
    scene: &SceneGraph,
    instance: &Instance,
    masks_unchanged: bool,
    intersector: &mut I,
) {
    if intersector.reached_limit() || !visitor.reaches(scene, instance, masks_unchanged) {
        return;
    }
    let Some(drawable) = scene.drawable(instance.drawable) else {
        return;
    };
    let geometry = drawable.as_geometry();
    if !intersector.hits_points_or_lines() && geometry.is_some_and(|g| !g.emits_triangles()) {
        return;
    }
    let local = intersector.localize(&instance.local_to_world, &instance.world_to_local);
    if !intersector.drawable_test_only_culls() {
        let is_geometry = geometry.is_some();
        let entered = scene
            .drawable_bound(instance.drawable)
            .is_some_and(|bound| {
                (is_geometry && intersector.drawable_test_follows_from_hits(&local, &bound))
                    || intersector.enter_drawable(&local, &bound)
            });
        if !entered {
            return;
        }
    }
    let context = DrawableContext {
        scene,
        node_path: &instance.path,
        drawable: instance.drawable,
        local_to_world: &instance.local_to_world,
        world_to_local: &instance.world_to_local,
        use_acceleration: true,
    };
    intersector.intersect(&local, &context, drawable);
}
