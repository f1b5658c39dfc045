import type { Page } from 'playwright-core'
import { screenshot } from './browser'

/**
 * The page as it is now, screenshotted in light and then in dark (`<name>-light`, `<name>-dark`): the system's colour
 * scheme switched, as a user's OS does, which a window on the System theme follows. Each once the window has taken
 * the theme (`data-theme` on <html>) and its colour transitions have run out; `check`, if given, runs in each theme
 * before its screenshot. Left in light. One scene shown in both themes, where a second window playing the whole scene
 * again in dark would check nothing more (issue 40, the suite's time). Returns the screenshots' paths.
 */
export async function screenshotBothThemes(page: Page, name: string, check?: (scheme: 'light' | 'dark') => Promise<void>): Promise<string[]> {
  const paths: string[] = []
  for (const scheme of ['light', 'dark'] as const) {
    await takeScheme(page, scheme)
    await check?.(scheme)
    paths.push(await screenshot(page, `${name}-${scheme}`))
  }
  await takeScheme(page, 'light')
  return paths
}

/** Switches the system's colour scheme; resolves once the window shows that theme, its colour transitions run out. */
async function takeScheme(page: Page, scheme: 'light' | 'dark'): Promise<void> {
  await page.emulateMedia({ colorScheme: scheme })
  // (A function, not a string, which the page's CSP would not let run; typed loosely, this file has no DOM types.)
  await page.waitForFunction(
    (want: string) => {
      const page = globalThis as any
      return (
        page.document.documentElement.dataset.theme === want && !page.document.getAnimations().some((a: unknown) => a instanceof page.CSSTransition)
      )
    },
    scheme,
    { timeout: 15_000 }
  )
}
