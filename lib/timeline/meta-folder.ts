/** Every Hudi table keeps its timeline, properties and service state under this folder of its base path. */
export const METAFOLDER = '.hoodie';
