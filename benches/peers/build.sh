#!/bin/sh
# Builds the C++ peers harness (OpenSceneGraph 3.6 + Embree 3) into target/peers/peers.
# Needs Debian's libopenscenegraph-dev and libembree-dev:
#   apt-get install -y libopenscenegraph-dev libembree-dev
set -eu
cd "$(dirname "$0")/../.."
mkdir -p target/peers
g++ -O2 -std=c++17 -Wall -Wextra benches/peers/peers.cpp \
    -o target/peers/peers -losgUtil -losg -lOpenThreads -lembree3
echo "built target/peers/peers"
