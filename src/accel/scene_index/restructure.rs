//! Structural edits: the instances collected again where children were linked or
//! unlinked, and matched to those held ([`SceneIndex::restructure`]).

use std::collections::HashMap;

use super::collect::{collect_in, Region};
use super::{Instance, SceneIndex};
use crate::accel::Aabb;
use crate::graph::{DrawableId, NodeId, SceneGraph};

/// The detached instances a [`SceneIndex::restructure`] may leave (or a quarter of the
/// instances, when that is more), and the removed ones it may keep (or as many as the
/// instances in the graph), before the index is built afresh instead.
const MAX_RESTRUCTURED_DETACHED: usize = 8;

impl SceneIndex {
    /// After structural edits below `root` (children linked or unlinked, drawables put
    /// in or taken out of geodes, a switch child turned, a reference frame changed):
    /// brings the index up to date with the graph without building its trees again;
    /// false, changing nothing, when building it afresh is better (below).
    ///
    /// The instances on paths through the nodes `changed` (the children linked or
    /// unlinked, the geodes, switches and transforms edited; `None`: anywhere) are
    /// collected again, as the build collects them, and matched to the ones held there
    /// by node path and drawable; the others are as they were. One found again under
    /// the same frame keeps its place in the world tree and takes its gates and masks
    /// anew (the children of a switch or LOD may have shifted); one found under
    /// another frame (a reference frame changed above it) is moved and detached, as a
    /// move detaches it; a new one (a vehicle spawned, a marker added) is appended,
    /// detached: visited whole from the tree of detached instances, in the place of one
    /// an earlier edit added and then removed if there is one (a marker added and taken
    /// away every frame leaves the index the size it was); one no longer found is
    /// [`removed`](Instance::removed), never visited again. Nothing else is touched.
    /// A marker added under the root of littlest_tokyo (or taken away), with the query
    /// after it, took 80–90 ms with the build of the whole index this replaces, and
    /// takes some 0.003 ms; on the generated city_s10, 120–150 ms against 0.2 ms (the
    /// instances through a changed node are remembered from one edit to the next, and
    /// a node created since the last collection is on no held path: reading the 71 718
    /// held paths for it took 2–3 ms). Collecting every instance again (`changed`
    /// `None`) costs nearly a build on such a city.
    ///
    /// False when the instances detached afterwards would be more than eight and a
    /// quarter of those in the graph, or the removed ones more than eight and more than
    /// those in the graph (whose triangles the world tree still holds, and the walks
    /// still meet): so many are better placed in a world tree built anew.
    pub fn restructure(
        &mut self,
        scene: &SceneGraph,
        root: NodeId,
        changed: Option<&[NodeId]>,
    ) -> bool {
        let region = changed.map(|nodes| Region::around(scene, nodes));
        let fresh = collect_in(scene, root, region.as_ref());
        let mut lookup = self.take_edit_lookup();
        // Whether each held instance may have changed: not removed already, and on a
        // path through a changed node (the others are as they were). The instances
        // through a node are remembered from one edit to the next (the first search
        // reads every held path: 2 ms on the generated city_s10), and a node created
        // since the instances were collected is on no path held.
        let affected: Vec<bool> = match changed {
            None => self.instances.iter().map(|i| !i.removed).collect(),
            Some(nodes) => {
                let mut affected = vec![false; self.instances.len()];
                let held: Vec<NodeId> = (nodes.iter().copied())
                    .filter(|&node| !scene.created_since(node, self.nodes_collected))
                    .collect();
                // One read of the held paths for all the nodes not remembered yet.
                lookup.edited.remember_under(&held, &self.instances);
                for &node in &held {
                    for &k in lookup.edited.under(node, &self.instances) {
                        affected[k as usize] = true;
                    }
                }
                affected
            }
        };
        // The held instance each fresh one is, if any.
        let matches: Vec<Option<u32>> = {
            let held: HashMap<(&[NodeId], DrawableId), u32> = (self.instances.iter())
                .enumerate()
                .filter(|&(k, _)| affected[k])
                .map(|(k, i)| ((&*i.path, i.drawable), k as u32))
                .collect();
            (fresh.iter())
                .map(|i| held.get(&(&*i.path, i.drawable)).copied())
                .collect()
        };
        // Held instances found again, or left as they were.
        let mut found: Vec<bool> = affected.iter().map(|a| !a).collect();
        for &k in matches.iter().flatten() {
            found[k as usize] = true;
        }
        let same_frame = |old: &Instance, new: &Instance| {
            old.local_to_world == new.local_to_world
                && old.world_to_local == new.world_to_local
                && old.active == new.active
        };
        // The instances detached afterwards: those detached now and found again, the
        // ones found under another frame, and the new ones.
        let still_detached = (self.detached.iter())
            .filter(|&&k| found[k as usize])
            .count();
        let newly_detached = (fresh.iter().zip(&matches))
            .filter(|(new, k)| {
                k.is_none_or(|k| {
                    let old = &self.instances[k as usize];
                    !old.detached && !same_frame(old, new)
                })
            })
            .count();
        let detached = still_detached + newly_detached;
        let live = self.instances.len() - self.removed;
        // The instances removed afterwards: those removed already and those not found
        // again, less the places of removed ones that new ones take; and those in the
        // graph then.
        // Places of instances edits added, removed then: nothing refers to them any
        // more, and the new ones take them first (the last on top), so that a marker
        // added and taken away every frame does not grow the index without end.
        let mut reusable: Vec<usize> = (self.built..self.instances.len())
            .rev()
            .filter(|&k| self.instances[k].removed || !found[k])
            .collect();
        let newly_removed = found.iter().filter(|&&found| !found).count();
        let new = matches.iter().filter(|k| k.is_none()).count();
        let removed_after = self.removed + newly_removed - new.min(reusable.len());
        let live_after = self.instances.len() + new.saturating_sub(reusable.len()) - removed_after;
        if detached > MAX_RESTRUCTURED_DETACHED.max(live / 4)
            || removed_after > MAX_RESTRUCTURED_DETACHED.max(live_after)
        {
            self.edit_lookup = Some(lookup);
            return false;
        }
        let (mut removed, mut added) = (Vec::new(), Vec::new());
        for (k, was_found) in found.iter().enumerate() {
            let instance = &mut self.instances[k];
            if *was_found || instance.removed {
                continue;
            }
            instance.removed = true;
            instance.detached = true;
            instance.active = false;
            instance.world_box = Aabb::EMPTY;
            self.removed += 1;
            lookup.kept.remove(&(k as u32));
            removed.push(k as u32);
        }
        self.detached.retain(|&k| found[k as usize]);
        for (new, k) in fresh.into_iter().zip(matches) {
            let Some(k) = k else {
                // New: detached, owning no triangle id (its start is the end of the
                // ids, as the next one's).
                let new = Instance {
                    detached: true,
                    ..new
                };
                let k = match reusable.pop() {
                    Some(k) => {
                        self.instances[k] = new;
                        self.removed -= 1;
                        k as u32
                    }
                    None => {
                        let ids = self.id_starts.last().copied().unwrap_or(0);
                        if self.id_starts.is_empty() {
                            self.id_starts.push(ids);
                        }
                        self.id_starts.push(ids);
                        self.instances.push(new);
                        self.instances.len() as u32 - 1
                    }
                };
                self.detached.push(k);
                added.push(k);
                continue;
            };
            let old = &mut self.instances[k as usize];
            let moved = !same_frame(old, &new);
            old.gates = new.gates;
            old.default_masks = new.default_masks;
            if moved {
                old.local_to_world = new.local_to_world;
                old.world_to_local = new.world_to_local;
                old.active = new.active;
                self.detach(scene, k);
                lookup.kept.remove(&k);
            }
        }
        if changed.is_none() {
            // Every instance's masks were looked at again.
            self.mask_edits = scene.mask_edits();
        }
        self.refits += 1;
        // The instance lists of edited nodes and drawables follow the instances; the
        // leaves of the instance tree were made for the instances before.
        let since = self.nodes_collected;
        (lookup.edited).follow(&removed, &added, &self.instances, |node| {
            scene.created_since(node, since)
        });
        self.nodes_collected = scene.nodes_created();
        lookup.leaf_paths = None;
        self.refit_detached_tree(&mut lookup, &[], true);
        self.edit_lookup = Some(lookup);
        true
    }
}
