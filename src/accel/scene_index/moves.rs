//! Matrix edits: the instances a moved node carries get their frames and world boxes
//! again ([`SceneIndex::refit_under`]), and a move of the whole scene moves the world
//! tree with them instead of detaching them.

use glam::{DAffine3, DMat3, DMat4, DVec3};

use super::placement::world_box_of;
use super::{EditLookup, Gate, Instance, SceneIndex};
use crate::accel::path_frames::{path_frame, Frame, PathFrames, PathProducts};
use crate::accel::runs::{for_each_run, map_in_runs, run_threads};
use crate::accel::world_frame::WorldFrame;
use crate::graph::{NodeId, SceneGraph};

/// The frame origin of the world tree and every instance's translation when the tree's
/// records were made: what [`SceneIndex::refit_under`] measures a move of the whole
/// scene against, so that the rounding of many moves does not add up unseen.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct ShiftReference {
    origin: DVec3,
    pub(super) translations: Vec<DVec3>,
}

/// How far, relative to the world tree's size and coordinates (in its frame) and to the
/// absolute coordinates of the instances' frames, the instances of a move of the whole
/// scene may end up from one common translation (or similarity) for the tree to be
/// moved with them instead of detaching them: `2^-40`, some `2^12` units of `f64`
/// rounding of the coordinates. The walks' `f32` margins allow for the `f32` rounding
/// of the records, some `2^-24` of the coordinates, and their pads for `2^-28` of the
/// absolute ones (see [`WorldFrame`]), which dwarf it. A move of the scene's root by a
/// translation moves every instance by that translation to a unit or two of rounding
/// of their coordinates (a small model 4·10^6 units out: of those millions).
const SHIFT_SLACK: f64 = 1.0 / (1u64 << 40) as f64;

impl SceneIndex {
    /// After the matrix of `moved` changed: recomputes the matrices and world boxes of
    /// the instances whose path goes through it (this index's root being `root`), and
    /// the matrices their LOD gates below it keep, with the plain traversal's
    /// arithmetic; detaches those still in the world tree, and refits the boxes on the
    /// paths to their leaves in the tree of detached instances (which is rebuilt
    /// instead when it gains an instance, and once it has absorbed as many refits as it
    /// holds instances). Nothing else is read or rebuilt once `moved` has been moved
    /// before: its first edit finds its instances among all ([`EditedInstances`]
    /// remembers them). The instance tree is left as it is: its walks skip detached
    /// instances.
    ///
    /// When `moved` is on every path and the move takes every instance of the world
    /// tree by one translation, or by one turn and uniform scale, the world tree moves
    /// instead and nothing is detached (see the module docs); when it is on the path
    /// every instance starts with, the parts that do not follow such a move are
    /// detached and the world tree moves with the rest. The instance tree is then
    /// refitted as a whole.
    ///
    /// [`EditedInstances`]: crate::accel::EditedInstances
    pub fn refit_under(&mut self, scene: &SceneGraph, root: NodeId, moved: NodeId) {
        let mut lookup = self.take_edit_lookup();
        if self.shift_under(scene, root, moved, &mut lookup)
            || self.turn_under(scene, root, moved, &mut lookup)
        {
            self.edit_lookup = Some(lookup);
            return;
        }
        let mut changed = Vec::new();
        let mut newly_detached = false;
        let mut frames = PathFrames::default();
        // (Every path holds `moved`: `under` found them so.)
        for &k in lookup.edited.under(moved, &self.instances) {
            let instance = &mut self.instances[k as usize];
            if instance.path.first() != Some(&root) {
                continue;
            }
            changed.push(k);
            let frame = frames.frame(scene, &instance.path);
            set_frame(scene, instance, frame, moved);
            newly_detached |= self.detach(scene, k);
        }
        self.refit_changed(&mut lookup, &changed, newly_detached);
        self.edit_lookup = Some(lookup);
    }

    /// [`refit_under`](Self::refit_under) for a move of the whole scene by one
    /// translation (a floating origin re-centred, a model dragged as a whole): when
    /// `moved` is on every instance's path, and every instance the world tree holds
    /// keeps its linear part and moves by one translation (to [`SHIFT_SLACK`]), the
    /// world tree moves with them by moving its frame's origin, and nothing is
    /// detached. The instances' matrices, LOD gates and world boxes are recomputed as
    /// for any move, the instance tree refitted, and the tree of detached instances
    /// brought up to date. False, changing nothing, otherwise (and once an edit has
    /// packed an instance's records anew, whose reference it does not keep, and once the
    /// world tree's frame has turned: see [`turn_under`](Self::turn_under)).
    ///
    /// Detached instead, every instance of littlest_tokyo was visited whole from then
    /// on, and its nearest segments took four times as long.
    fn shift_under(
        &mut self,
        scene: &SceneGraph,
        root: NodeId,
        moved: NodeId,
        lookup: &mut EditLookup,
    ) -> bool {
        let live = self.instances.len() - self.removed;
        if self.world.is_empty()
            || self.world.frame().is_turned()
            || !lookup.kept.is_empty()
            || lookup.edited.under(moved, &self.instances).len() != live
        {
            return false;
        }
        let (instances, world) = (&self.instances, &self.world);
        let reference = lookup
            .shift_reference
            .get_or_insert_with(|| ShiftReference {
                origin: world.frame().origin(),
                translations: (instances.iter())
                    .map(|i| i.local_to_world.w_axis.truncate())
                    .collect(),
            });
        let (min, max) = world.bounds().as_dvec3();
        let size = (max - min).max_element() + min.abs().max(max.abs()).max_element();
        // The new frames of the instances in the world tree first (in runs on the
        // machine's cores), a run refusing at its first instance that does not keep its
        // linear part (a turn refuses at once); nothing changed until all follow.
        let same_linear = |a: &DMat4, b: &DMat4| {
            a.x_axis == b.x_axis && a.y_axis == b.y_axis && a.z_axis == b.z_axis
        };
        let frames = map_in_runs(instances, run_threads(instances.len()), |run, frames| {
            let mut path_frames = PathFrames::default();
            for instance in run {
                if instance.path.first() != Some(&root) {
                    frames.push(Err(()));
                    break;
                }
                if !instance.in_world_tree() {
                    frames.push(Ok(None));
                    continue;
                }
                let (old_l2w, old_w2l) = (&instance.local_to_world, &instance.world_to_local);
                match path_frames.frame(scene, &instance.path) {
                    Some((l2w, w2l))
                        if same_linear(&l2w, old_l2w)
                            && same_linear(&w2l, old_w2l)
                            && l2w.w_axis.w == old_l2w.w_axis.w =>
                    {
                        frames.push(Ok(Some((l2w, w2l))))
                    }
                    _ => {
                        frames.push(Err(()));
                        break;
                    }
                }
            }
        });
        let Ok(frames) = frames.into_iter().collect::<Result<Vec<Frame>, ()>>() else {
            return false;
        };
        // And all by one translation.
        let mut shift: Option<DVec3> = None;
        for (k, frame) in frames.iter().enumerate() {
            let Some((l2w, _)) = frame else {
                continue;
            };
            let (now, then) = (l2w.w_axis.truncate(), reference.translations[k]);
            let moved_by = now - then;
            let shift = *shift.get_or_insert(moved_by);
            let absolute = now.abs().max(then.abs()).max_element();
            let slack = SHIFT_SLACK * (size + absolute);
            // (Compared so that a NaN refuses.)
            if !(moved_by - shift).abs().cmple(DVec3::splat(slack)).all() {
                return false;
            }
        }
        let Some(shift) = shift else {
            return false;
        };
        let origin = reference.origin + shift;
        if !origin.is_finite() {
            return false;
        }
        if self
            .common
            .as_ref()
            .is_some_and(|c| !c.path.contains(&moved))
        {
            // A node on every path but off the common one (shared below different
            // parents) moved: the paths' rests changed, and turns measured against the
            // build would no longer hold (see `turn_under`).
            self.common = None;
        }
        self.carry(scene, moved, WorldFrame::around(origin), frames, lookup);
        true
    }

    /// [`refit_under`](Self::refit_under) for a move of the whole scene that turns or
    /// scales it uniformly (a model turned in a viewer, a scene scaled to other units):
    /// when `moved` is on the path every instance starts with, the frame at that path's
    /// end now and at the build differ by a similarity (the frame now times the
    /// inverse of the one then), and an instance the world tree holds follows it (its
    /// frame now is the similarity times its frame at the build, to [`SHIFT_SLACK`] of
    /// the tree's size and coordinates over its drawable's box), the world tree's frame
    /// is carried by the similarity ([`WorldFrame::carried_by`]); the instances that do
    /// not follow (a part under an absolute transform, which stays put) are detached,
    /// and the rest is done as [`shift_under`](Self::shift_under) does it. False,
    /// changing nothing, when none follows.
    ///
    /// Measured against the build, not against the move before: the rounding of an
    /// orbit of many small turns does not add up. The frames at the build are computed
    /// again from the common path's frame then and each path's rest, whose matrices
    /// cannot have changed while the instance stays in the world tree (a move of a node
    /// there detaches what lies below, or, moving every instance by one translation
    /// from a place off the common path, forgets the common path). Every frame the tree
    /// has had since the build takes an instance's records to where its frame then put
    /// them, so records an edit packed anew in one of them hold in the next too.
    ///
    /// Detached instead, every instance of littlest_tokyo was visited whole from then
    /// on, and its nearest segments took six times as long. (A translation is a
    /// similarity too: a translation of the whole scene that `shift_under` refuses for
    /// a part that stays put comes here, and detaches only that part.)
    ///
    /// Every instance's frame is still computed again (here, and in `shift_under`
    /// and `carry`, in runs on the machine's cores: see [`map_in_runs`]): 13–15 ms
    /// for the 71 717 instances of city_s10 on two cores, 21–23 ms on one.
    fn turn_under(
        &mut self,
        scene: &SceneGraph,
        root: NodeId,
        moved: NodeId,
        lookup: &mut EditLookup,
    ) -> bool {
        let Some(common) = &self.common else {
            return false;
        };
        if self.world.is_empty()
            || common.path.first() != Some(&root)
            || !common.path.contains(&moved)
        {
            return false;
        }
        let Some((now, _)) = path_frame(scene, &common.path) else {
            return false;
        };
        let then = DAffine3::from_mat4(common.local_to_world);
        let motion = DAffine3::from_mat4(now) * then.inverse();
        let Some(frame) = common.frame.carried_by(&motion) else {
            return false;
        };
        let motion = DMat4::from(motion);
        let (min, max) = self.world.bounds().as_dvec3();
        let size = (max - min).max_element() + min.abs().max(max.abs()).max_element();
        let size = size * frame.unit();
        // The new frames of the instances in the world tree that follow; `None` for the
        // others, which `carry` detaches. Nothing changed unless one follows.
        let rest = common.path.len();
        let threads = run_threads(self.instances.len());
        let frames = map_in_runs(&self.instances, threads, |run, frames| {
            let mut path_frames = PathFrames::default();
            let mut built_frames = PathProducts::below(common.local_to_world);
            for instance in run {
                let mut follows = |(l2w, w2l): (DMat4, DMat4)| {
                    let built = (instance.path.get(rest..))
                        .and_then(|path| built_frames.local_to_world(scene, path))?;
                    let bound = scene.drawable_bound(instance.drawable)?;
                    let absolute = l2w.w_axis.truncate().abs().max_element();
                    let slack = SHIFT_SLACK * (size + absolute);
                    // (Infinite when anything is not finite; a NaN slack does not follow.)
                    let apart = farthest_apart(&l2w, &(motion * built), bound.min, bound.max);
                    (apart <= slack).then_some((l2w, w2l))
                };
                let frame = instance
                    .in_world_tree()
                    .then(|| path_frames.frame(scene, &instance.path))
                    .flatten()
                    .and_then(&mut follows);
                frames.push(frame);
            }
        });
        if frames.iter().all(Option::is_none) {
            return false;
        }
        self.carry(scene, moved, frame, frames, lookup);
        true
    }

    /// The end of a move of the whole scene that the world tree follows: gives the tree
    /// `frame`, and the instances their new `frames` (those in the world tree that
    /// follow the move; the others, `None` there, are moved as any move moves them, and
    /// detached), with their LOD gates and world boxes; refits the instance tree as a
    /// whole and brings the tree of detached instances up to date.
    fn carry(
        &mut self,
        scene: &SceneGraph,
        moved: NodeId,
        frame: WorldFrame,
        frames: Vec<Frame>,
        lookup: &mut EditLookup,
    ) {
        self.world.set_frame(frame);
        // The instances that follow, each on its own (in runs on the machine's cores).
        let threads = run_threads(self.instances.len());
        for_each_run(&mut self.instances, threads, |first, run| {
            for (instance, frame) in run.iter_mut().zip(&frames[first..]) {
                if frame.is_some() && !instance.removed {
                    set_frame(scene, instance, *frame, moved);
                    instance.world_box = world_box_of(scene, instance);
                }
            }
        });
        // The others, detached already or never in the world tree (under a transform
        // singular at the build): moved as any move moves them, and detached.
        let mut newly_detached = false;
        let mut path_frames = PathFrames::default();
        for (k, frame) in frames.iter().enumerate() {
            let instance = &mut self.instances[k];
            if frame.is_none() && !instance.removed {
                let frame = path_frames.frame(scene, &instance.path);
                set_frame(scene, instance, frame, moved);
                newly_detached |= self.detach(scene, k as u32);
            }
        }
        let changed: Vec<u32> = (0..self.instances.len() as u32)
            .filter(|&k| !self.instances[k as usize].removed)
            .collect();
        self.refit_changed(lookup, &changed, newly_detached);
    }
}

/// How far apart, at most (the largest coordinate of the difference), the affine maps
/// `a` and `b` take a point of the box `[min, max]`: the difference map at the box's
/// centre plus its linear part's magnitudes times the half diagonal. Infinite when
/// either map or the box is not finite.
fn farthest_apart(a: &DMat4, b: &DMat4, min: DVec3, max: DVec3) -> f64 {
    let column = |k: usize| (a.col(k) - b.col(k)).truncate();
    let (centre, half) = ((min + max) * 0.5, (max - min) * 0.5);
    let linear = DMat3::from_cols(column(0), column(1), column(2));
    let at_centre = linear * centre + column(3);
    let abs = DMat3::from_cols(
        linear.x_axis.abs(),
        linear.y_axis.abs(),
        linear.z_axis.abs(),
    );
    let apart = at_centre.abs() + abs * half;
    if apart.is_finite() {
        apart.max_element()
    } else {
        f64::INFINITY
    }
}

/// Gives `instance` its new `frame` (its path's, after `moved`'s matrix changed): its
/// matrices, or inactive under a singular one, and the matrices of its LOD gates below
/// `moved`.
fn set_frame(scene: &SceneGraph, instance: &mut Instance, frame: Frame, moved: NodeId) {
    instance.active = frame.is_some();
    if let Some((l2w, w2l)) = frame {
        instance.local_to_world = l2w;
        instance.world_to_local = w2l;
    }
    refresh_lod_gates(scene, instance, moved);
}

/// The matrices `instance`'s LOD gates below `moved` keep, recomputed after `moved`'s
/// matrix changed: a LOD below the moved node moved with it, and its eye distances
/// change.
fn refresh_lod_gates(scene: &SceneGraph, instance: &mut Instance, moved: NodeId) {
    for gate in instance.gates.iter_mut() {
        if let Gate::Lod {
            node,
            local_to_world,
            ..
        } = gate
        {
            let Some(at) = instance.path.iter().position(|n| n == node) else {
                continue;
            };
            if instance.path[..at].contains(&moved) {
                if let Some((l2w, _)) = path_frame(scene, &instance.path[..=at]) {
                    *local_to_world = l2w;
                }
            }
        }
    }
}
