// postject ships no types; the one function scripts/build.ts calls.
declare module 'postject' {
  export function inject(filename: string, resourceName: string, resourceData: Buffer, options?: { sentinelFuse?: string; overwrite?: boolean }): Promise<void>;
}
