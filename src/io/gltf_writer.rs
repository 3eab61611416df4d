//! Writing a scene graph as binary glTF (in progress).
