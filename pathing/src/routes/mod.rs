//! Long AI routes: waypoint graphs planned as hops between waypoints placed on the map.

pub mod waypoints;
