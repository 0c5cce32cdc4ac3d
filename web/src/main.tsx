import '@mantine/core/styles.css';
import '@mantine/notifications/styles.css';
import './theme.css';
import { createTheme, MantineProvider, Modal, Notification } from '@mantine/core';
import { Notifications } from '@mantine/notifications';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { BrowserRouter } from 'react-router';
import { ApiError } from './api/client';
import { App } from './App';

// Close buttons get a name (axe button-name). Only props here: theme values would need Mantine's runtime <style>.
const theme = createTheme({
  components: {
    // lockScroll off: react-remove-scroll writes an inline <style> to lock the page, which style-src 'self' refuses.
    Modal: Modal.extend({ defaultProps: { closeButtonProps: { 'aria-label': 'Close' }, lockScroll: false } }),
    Notification: Notification.extend({ defaultProps: { closeButtonProps: { 'aria-label': 'Dismiss' } } }),
  },
});

const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      // A refusal (4xx) will not change by asking again; a network blip might.
      retry: (n, err) => !(err instanceof ApiError && err.status < 500) && n < 2,
      refetchOnWindowFocus: false,
      staleTime: 10_000,
    },
  },
});

// The default theme's variables come from @mantine/core/styles.css; the provider's runtime <style> tags (theme
// variables, responsive classes) are off so the console runs under `style-src 'self'` (no inline styles).
createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <MantineProvider theme={theme} withCssVariables={false} withGlobalClasses={false} defaultColorScheme="light">
      <Notifications />
      <QueryClientProvider client={queryClient}>
        <BrowserRouter>
          <App />
        </BrowserRouter>
      </QueryClientProvider>
    </MantineProvider>
  </StrictMode>,
);
