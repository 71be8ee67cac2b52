/**
 * Only for running the example inside this checkout: `kube-apiserver-ts`
 * resolves to the checkout's own dist/ (the package self-reference), which
 * vitest would otherwise transform module by module like source code. An
 * installed package lives in node_modules and is imported as it is, so a
 * project that depends on the package needs no such setting.
 */
import { defineConfig } from 'vitest/config'

export default defineConfig({ test: { server: { deps: { external: [/\/dist\//] } } } })
