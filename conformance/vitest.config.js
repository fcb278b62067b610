import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["conformance.test.js"],
    setupFiles: ["auth-setup.js"],
    testTimeout: 30000,
    hookTimeout: 30000,
    reporters: ["default"],
  },
})
