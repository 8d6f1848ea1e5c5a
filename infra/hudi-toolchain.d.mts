// Types of infra/hudi-toolchain.mjs for the TypeScript tests that locate the toolchain through it.
export declare const TOOLCHAIN_DIR: string;
export declare const INSTALL_COMMAND: string;
export interface ToolchainPaths {
  readonly dir: string;
  readonly python: string;
  /** Maven artifacts by role (test/hudi/toolchain.json `maven`). */
  readonly jars: Record<string, string>;
  /** A jar set's jars by role, empty until the set is complete (`jarSets`). */
  readonly jarSets: Record<string, string[]>;
  readonly pythonReady: boolean;
  readonly jarsReady: boolean;
}
export declare function toolchainPaths(): ToolchainPaths;
export declare function ensureToolchain(): ToolchainPaths;
export declare function ensureJarSet(set: { readonly role: string; readonly pom: string }): string[];
