//! # scene-intersect
//!
//! Intersection queries against a scene graph, in the style of OpenSceneGraph's
//! `osgUtil` intersection framework: load a glTF scene into a [`graph::SceneGraph`],
//! then ask which triangles, lines and points a line segment, a polytope or a sphere
//! touches.
//!
//! The modules follow the architecture:
//! * [`graph`]: the scene graph (nodes, node masks, transforms, LOD/Switch, bounds);
//! * [`drawable`]: drawables, primitive sets in every GL mode and primitive functors;
//! * [`bounding`]: bounding boxes and spheres;
//! * [`io`]: glTF loading;
//! * [`collide`]: the collision toolkit of classic geometric tests.

pub mod bounding;
pub mod collide;
pub mod drawable;
pub mod graph;
pub mod io;
