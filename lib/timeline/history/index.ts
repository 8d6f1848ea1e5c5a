/** Hudi 1.x's timeline history (the LSM tree of archived instants): layout, manifests, reading. */
export * from './archived-instant.js';
export * from './layout.js';
export * from './manifest.js';
export * from './read.js';
export * from './write.js';
